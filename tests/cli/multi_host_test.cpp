// Runs whose ranks a launcher started, across "hosts" that are network namespaces of this
// machine with addresses of their own (net_hosts.hpp): torchrun as docs/multi-host.md shows it,
// the explicit --rank/--world/--store flags, a Redis store; the run is FINISHED with every rank's
// metrics in rank 0's database and the losses of the same sweep on one host; ranks that disagree
// are refused before anything trains; a host whose processes die fails the run with a reason
// within its timeout and leaves no laconic process behind.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "cli_harness.hpp"
#include "free_port.hpp"
#include "net_hosts.hpp"
#include "skip.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

namespace {

// Two runs of 4 ranks (workers = 4: torchrun's 2 nodes x 2 processes), a few steps each.
std::string sweep(const std::string& name, int workers, const std::string& extra = "max_steps = 6,") {
  return "experiment {\n"
         "  name = \"" +
         name +
         "\",\n"
         "  data = synthetic { shape = {1, 8, 8}, n = 1024, test_n = 64 },\n"
         "  model = mlp { sizes = {64, 16, 10} },\n"
         "  optimizer = sgd { lr = 0.1, momentum = 0.9 },\n"
         "  batch_size = 16, workers = " +
         std::to_string(workers) +
         ", eval_limit = 64, timeout = 20,\n"
         "  " +
         extra +
         "\n"
         "  compressor = sweep { none(), topk { ratio = 0.25 } },\n"
         "}\n";
}

// run name -> "step worker value" of every train_loss row, in order.
std::map<std::string, std::vector<std::string>> loss_texts(const std::string& path) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(
      db->handle(),
      "SELECT r.name, m.step || ' ' || m.worker || ' ' || m.value FROM metrics m "
      "JOIN runs r ON r.id = m.run_id WHERE m.key = 'train_loss' ORDER BY r.name, m.step, m.worker");
  std::map<std::string, std::vector<std::string>> out;
  while (rows.step()) out[rows.column_text(0)].push_back(rows.column_text(1));
  return out;
}

std::string query_text(const std::string& path, const std::string& sql) {
  auto db = storage::Database::open_read_only(path);
  storage::Statement rows(db->handle(), sql);
  std::string out;
  while (rows.step()) out += (out.empty() ? "" : "\n") + rows.column_text(0);
  return out;
}

std::string torchrun(const NetHosts& hosts, int node, const std::string& file, const std::string& db) {
  return "torchrun --nnodes 2 --nproc_per_node 2 --node_rank " + std::to_string(node) + " --master_addr " +
         hosts.address(0) + " --master_port 29500 --redirects 1 --tee 1 --log_dir logs" + std::to_string(node) +
         " --no_python laconic run " + file + " --db " + db + " --launch-timeout 60";
}

int exit_status(std::optional<int> raw) { return raw && WIFEXITED(*raw) ? WEXITSTATUS(*raw) : -1; }

// A Redis server on 127.0.0.1:`port` that keeps nothing on disk; the caller stops it.
pid_t start_redis(int port) {
  const pid_t redis = ::fork();
  if (redis == 0) {
    std::freopen("/dev/null", "w", stdout);
    ::execlp("redis-server", "redis-server", "--port", std::to_string(port).c_str(), "--bind", "127.0.0.1", "--save",
             "", "--appendonly", "no", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return redis;
}

// Waits up to a minute until `workers` workers have recorded a training loss in `db`.
bool every_worker_trains(const std::string& db, int workers) {
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(100ms);
    if (!std::filesystem::exists(db)) continue;
    try {
      if (query_text(db, "SELECT count(DISTINCT worker) FROM metrics WHERE key = 'train_loss'") ==
          std::to_string(workers))
        return true;
    } catch (const std::exception&) {}
  }
  return false;
}

}  // namespace

TEST_CASE("torchrun on two hosts records a finished sweep with every rank's metrics and one host's losses",
          "[cli][e2e][multihost][needs-root]") {
  NetHosts hosts(2);
  if (!hosts.ok()) {
    LACONIC_SKIP("network namespaces cannot be made here, so no hosts to launch on: " << hosts.why());
  }
  REQUIRE(std::system("command -v torchrun >/dev/null") == 0);  // Debian's python3-torch (setup script)
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("launched", 4));
  const auto one = run_laconic(dir, "run exp.lua --db one.db --quiet", 300);
  INFO(one.out << one.err);
  REQUIRE(one.status == 0);

  const pid_t b = hosts.start(1, dir, torchrun(hosts, 1, "exp.lua", "results.db"), "b.log");
  const pid_t a = hosts.start(0, dir, torchrun(hosts, 0, "exp.lua", "results.db"), "a.log");
  const int a_status = exit_status(wait_for_exit(a, 240));
  const int b_status = exit_status(wait_for_exit(b, 60));
  INFO("host 0:\n" << read_file(dir + "/a.log") << "\nhost 1:\n" << read_file(dir + "/b.log"));
  REQUIRE(a_status == 0);
  CHECK(b_status == 0);
  CHECK(query_text(dir + "/results.db", "SELECT group_concat(status) FROM runs") == "FINISHED,FINISHED");
  // Every rank's per-step metrics reached rank 0's database: 6 steps of each of 4 workers.
  CHECK(query_text(dir + "/results.db",
                   "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM metrics WHERE key = 'train_loss' "
                   "GROUP BY run_id, worker ORDER BY run_id, worker)") == "6,6,6,6,6,6,6,6");
  CHECK(query_text(dir + "/results.db", "SELECT count(DISTINCT worker) FROM metrics WHERE key = 'bytes_sent'") == "4");
  const auto launched = loss_texts(dir + "/results.db");
  CHECK(launched.size() == 2);
  CHECK(launched == loss_texts(dir + "/one.db"));  // same seed, same losses, bit for bit
  const std::string facts =
      query_text(dir + "/results.db", "SELECT key || '=' || value FROM run_facts WHERE run_id = 1");
  CHECK_THAT(facts, Catch::Contains("launcher=torchrun: rank 0 of 4") && Catch::Contains("served by torchrun's agent"));
  CHECK_THAT(facts, Catch::Contains("at " + hosts.address(0)) && Catch::Contains("at " + hosts.address(1)));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the explicit flags run a sweep across two hosts, rank 0 serving the TCP store", "[cli][e2e][multihost][needs-root]") {
  NetHosts hosts(2);
  if (!hosts.ok()) {
    LACONIC_SKIP("network namespaces cannot be made here: " << hosts.why());
  }
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("flags", 2));
  const std::string store = " --world 2 --store tcp://" + hosts.address(0) + ":29400";
  // These hosts share one kernel (and its clock); LACONIC_ARRIVALS=stamps has them measure their
  // waiting as hosts of their own must: clock offsets estimated, arrivals beside the messages.
  const std::string laconic = "env LACONIC_ARRIVALS=stamps laconic";
  const pid_t b = hosts.start(1, dir, laconic + " run exp.lua --rank 1" + store, "b.log");
  const pid_t a = hosts.start(0, dir, laconic + " run exp.lua --db flags.db --rank 0" + store, "a.log");
  const int a_status = exit_status(wait_for_exit(a, 180));
  const int b_status = exit_status(wait_for_exit(b, 30));
  INFO("host 0:\n" << read_file(dir + "/a.log") << "\nhost 1:\n" << read_file(dir + "/b.log"));
  CHECK(a_status == 0);
  CHECK(b_status == 0);
  CHECK(query_text(dir + "/flags.db", "SELECT group_concat(status) FROM runs") == "FINISHED,FINISHED");
  CHECK(query_text(dir + "/flags.db", "SELECT count(DISTINCT worker) FROM metrics WHERE key = 'train_loss'") == "2");
  CHECK_THAT(read_file(dir + "/b.log"),
             Catch::Contains("laconic rank 1 of 2") && Catch::Contains("joined rank 0 at " + hosts.address(0)));
  const std::string db = dir + "/flags.db";
  CHECK(query_text(db, "SELECT group_concat(value) FROM run_facts WHERE key = 'wait_measured'") ==
        "message_stamps,message_stamps");
  // The offsets' worst error: half a round trip between two namespaces of this machine.
  for (const std::string& error : {query_text(db,
                                              "SELECT value FROM run_facts WHERE run_id = 1 AND key = "
                                              "'clock_offset_error'"),
                                   query_text(db,
                                              "SELECT value FROM run_facts WHERE run_id = 2 AND key = "
                                              "'clock_offset_error'")}) {
    INFO("clock_offset_error = " << error);
    REQUIRE(!error.empty());
    CHECK(std::stod(error) > 0);
    CHECK(std::stod(error) < 0.05);
  }
  CHECK(query_text(db, "SELECT count(DISTINCT worker) FROM metrics WHERE key = 'time_wait'") == "2");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a Redis store brings the ranks of a sweep together", "[cli][e2e][multihost]") {
  REQUIRE(std::system("command -v redis-server >/dev/null") == 0);  // Debian's redis-server (setup script)
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("redis", 2));
  const int port = free_port();
  const pid_t redis = start_redis(port);
  const std::string store = "redis://127.0.0.1:" + std::to_string(port);
  // Rank 1 in a directory of its own (its output there), with the same file.
  std::filesystem::create_directories(dir + "/rank1");
  write_file(dir + "/rank1/exp.lua", sweep("redis", 2));
  const pid_t b = start_laconic(
      dir + "/rank1", {"run", "exp.lua", "--launch-timeout", "60", "--rank", "1", "--world", "2", "--store", store});
  const auto a = run_laconic(dir, "run exp.lua --db redis.db --quiet --rank 0 --world 2 --store " + store, 120);
  const int b_status = exit_status(wait_for_exit(b, 30));
  ::kill(redis, SIGTERM);
  wait_for_exit(redis, 10);
  INFO("rank 0:\n"
       << a.out << a.err << "\nrank 1:\n"
       << read_file(dir + "/rank1/.stdout") << read_file(dir + "/rank1/.stderr"));
  CHECK(a.status == 0);
  CHECK(b_status == 0);
  CHECK(query_text(dir + "/redis.db", "SELECT group_concat(status) FROM runs") == "FINISHED,FINISHED");
  std::filesystem::remove_all(dir);
}

TEST_CASE("two launches sharing one Redis server each finish their own sweep", "[cli][e2e][multihost]") {
  REQUIRE(std::system("command -v redis-server >/dev/null") == 0);
  const auto dir = make_temp_dir();
  const int port = free_port();
  const pid_t redis = start_redis(port);
  const std::string store = "redis://127.0.0.1:" + std::to_string(port);
  // Launches x and y of the same experiment, each rank in a directory of its own: before launch
  // ids, x's rank 1 could join y's rank 0 (one key, laconic/rank0, for every launch).
  std::vector<pid_t> ranks;
  for (const std::string launch : {"x", "y"})
    for (int rank = 0; rank < 2; ++rank) {
      const std::string home = dir + "/" + launch + std::to_string(rank);
      std::filesystem::create_directories(home);
      write_file(home + "/exp.lua", sweep("shared", 2));
      std::vector<std::string> args{
          "run",     "exp.lua", "--launch-timeout", "60",  "--rank",      std::to_string(rank),
          "--world", "2",       "--store",          store, "--launch-id", launch};
      if (rank == 0) args.insert(args.end(), {"--db", launch + ".db", "--quiet"});
      ranks.push_back(start_laconic(home, args));
    }
  std::vector<int> statuses;
  for (const pid_t pid : ranks) statuses.push_back(exit_status(wait_for_exit(pid, 180)));
  ::kill(redis, SIGTERM);
  wait_for_exit(redis, 10);
  for (const std::string name : {"x0", "x1", "y0", "y1"})
    UNSCOPED_INFO(name << ":\n"
                       << read_file(dir + "/" + name + "/.stdout") << read_file(dir + "/" + name + "/.stderr"));
  CHECK(statuses == std::vector<int>{0, 0, 0, 0});
  for (const std::string launch : {"x", "y"}) {
    const std::string db = dir + "/" + launch + "0/" + launch + ".db";
    CHECK(query_text(db, "SELECT group_concat(status) FROM runs") == "FINISHED,FINISHED");
    CHECK_THAT(query_text(db, "SELECT value FROM run_facts WHERE run_id = 1 AND key = 'launcher'"),
               Catch::Contains("--store " + store));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("mpirun's ranks run a sweep with MASTER_ADDR and MASTER_PORT, rank 0 serving the store",
          "[cli][e2e][multihost]") {
  REQUIRE(std::system("command -v mpirun >/dev/null") == 0);  // Debian's openmpi-bin (setup script)
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("mpi", 2));
  const std::string bin = std::string(LACONIC_BINARY).substr(0, std::string(LACONIC_BINARY).rfind('/'));
  // As root Open MPI wants to be told twice; --oversubscribe: the machine may have fewer cores
  // than slots Open MPI counts.
  const std::string command = "cd '" + dir + "' && PATH='" + bin +
                              "':$PATH timeout 120 mpirun --allow-run-as-root "
                              "--oversubscribe -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=" +
                              std::to_string(free_port()) + " laconic run exp.lua --db mpi.db > mpi.log 2>&1";
  const int raw = std::system(command.c_str());
  const std::string log = read_file(dir + "/mpi.log");
  INFO(log);
  CHECK((WIFEXITED(raw) ? WEXITSTATUS(raw) : -1) == 0);
  // Open MPI hands its ranks a pty: rank 0 writes whole lines all the same, no terminal redraws.
  CHECK_THAT(log, Catch::Contains("[1/2] mpi compressor=none,seed=1: started"));
  CHECK(log.find("\x1b[K") == std::string::npos);
  CHECK(query_text(dir + "/mpi.db", "SELECT group_concat(status) FROM runs") == "FINISHED,FINISHED");
  CHECK_THAT(query_text(dir + "/mpi.db", "SELECT value FROM run_facts WHERE run_id = 1 AND key = 'launcher'"),
             Catch::StartsWith("openmpi: rank 0 of 2, store tcp://127.0.0.1:"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("ranks that disagree on the experiment are refused before anything trains, naming the rank",
          "[cli][e2e][multihost]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("agree", 2));
  std::filesystem::create_directories(dir + "/other");
  write_file(dir + "/other/exp.lua", sweep("agree", 2, "max_steps = 7,"));  // edited on one host only
  const std::string store = "file://" + dir + "/store";
  const pid_t b = start_laconic(
      dir + "/other", {"run", "exp.lua", "--launch-timeout", "60", "--rank", "1", "--world", "2", "--store", store});
  const auto a = run_laconic(dir, "run exp.lua --db agree.db --rank 0 --world 2 --store " + store, 60);
  const int b_status = exit_status(wait_for_exit(b, 30));
  const std::string b_err = read_file(dir + "/other/.stderr");
  INFO(a.out << a.err << "\nrank 1: " << b_err);
  CHECK(a.status == 2);
  CHECK_THAT(a.err, Catch::Contains("rank 1 (host ") && Catch::Contains("loaded an experiment file with hash") &&
                        Catch::Contains("every host needs the same file"));
  CHECK(b_status == 2);
  CHECK_THAT(b_err, Catch::Contains("rank 0 refused the sweep: rank 1 (host "));
  CHECK(query_text(dir + "/agree.db", "SELECT count(*) FROM runs") == "0");

  // A world the runs do not fit is refused by every rank on its own, before it connects.
  const auto wrong = run_laconic(dir, "run exp.lua --db agree.db --rank 0 --world 3 --store " + store, 60);
  CHECK(wrong.status == 2);
  CHECK_THAT(wrong.err, Catch::Contains("the launcher started 3 ranks") && Catch::Contains("needs 2"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a rank stopped by Ctrl-C or SIGTERM while it waits for the others says so and exits 130",
          "[cli][e2e][multihost]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/exp.lua", sweep("alone", 2));
  // waits for `text` in the process's stdout, then stops it as torchrun or a terminal would
  const auto stop_when = [&](pid_t pid, const std::string& text) {
    for (int i = 0; i < 300 && read_file(dir + "/.stdout").find(text) == std::string::npos; ++i)
      std::this_thread::sleep_for(100ms);
    std::this_thread::sleep_for(1500ms);
    const auto stopped = std::chrono::steady_clock::now();
    ::kill(pid, SIGTERM);
    const int status = exit_status(wait_for_exit(pid, 10));
    return std::make_pair(status, std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count());
  };

  // Rank 0, serving the TCP store, with no other rank: not "did not join within 300 s".
  const std::string tcp = "tcp://127.0.0.1:" + std::to_string(free_port());
  const pid_t a = start_laconic(dir, {"run", "exp.lua", "--db", "a.db", "--rank", "0", "--world", "2", "--store", tcp});
  const auto [a_status, a_seconds] = stop_when(a, "waiting up to 300 s");
  const std::string a_err = read_file(dir + "/.stderr");
  INFO("rank 0: " << read_file(dir + "/.stdout") << a_err);
  CHECK(a_status == 130);
  CHECK(a_seconds < 3);
  CHECK_THAT(a_err, Catch::Contains("rank 0 stopped by the user (Ctrl-C or SIGTERM) after waiting ") &&
                        Catch::Contains(" s of 300 s (--launch-timeout) for ranks 1 of 2"));
  CHECK(a_err.find("did not join") == std::string::npos);

  // Rank 1 with no rank 0 in the store.
  const pid_t b =
      start_laconic(dir, {"run", "exp.lua", "--rank", "1", "--world", "2", "--store", "file://" + dir + "/store"});
  const auto [b_status, b_seconds] = stop_when(b, "");
  const std::string b_err = read_file(dir + "/.stderr");
  INFO("rank 1: " << b_err);
  CHECK(b_status == 130);
  CHECK(b_seconds < 3);
  CHECK_THAT(b_err, Catch::Contains("rank 1 stopped by the user (Ctrl-C or SIGTERM) after waiting ") &&
                        Catch::Contains("rank 0 has not published its address"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a host whose processes die fails the run within its timeout and leaves no laconic process",
          "[cli][e2e][multihost][slow][needs-root]") {
  NetHosts hosts(2);
  if (!hosts.ok()) {
    LACONIC_SKIP("network namespaces cannot be made here: " << hosts.why());
  }
  REQUIRE(std::system("command -v torchrun >/dev/null") == 0);
  const auto dir = make_temp_dir();
  write_file(dir + "/long.lua", sweep("dies", 4, "epochs = 1000,"));  // far longer than the test
  const pid_t b = hosts.start(1, dir, torchrun(hosts, 1, "long.lua", "long.db"), "b.log");
  const pid_t a = hosts.start(0, dir, torchrun(hosts, 0, "long.lua", "long.db"), "a.log");
  // Wait until the first run trains on every rank.
  const bool training = every_worker_trains(dir + "/long.db", 4);
  INFO("host 0:\n" << read_file(dir + "/a.log") << "\nhost 1:\n" << read_file(dir + "/b.log"));
  REQUIRE(training);
  hosts.kill_host(1);
  const auto killed = std::chrono::steady_clock::now();
  // Rank 0's laconic processes end once the run failed; torchrun's agent on host 0 then waits
  // for the dead node's agent at its exit barrier, which is torchrun's, not laconic's.
  while (!hosts.pids_named(0, "laconic").empty() && std::chrono::steady_clock::now() - killed < 60s)
    std::this_thread::sleep_for(100ms);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  INFO("laconic processes on host 0 ended " << seconds << " s after host 1 died");
  CHECK(hosts.pids_named(0, "laconic").empty());
  CHECK(hosts.pids_named(1, "laconic").empty());
  CHECK(seconds < 20 + 10);  // the run's timeout, and some slack for a loaded machine
  const std::string runs =
      query_text(dir + "/long.db", "SELECT status || ': ' || coalesce(error, '') FROM runs ORDER BY id");
  INFO(runs);
  CHECK_THAT(runs, Catch::StartsWith("FAILED: worker 2 (") && Catch::Contains("lost: its connection to rank 0 closed"));
  CHECK_THAT(runs, Catch::EndsWith("QUEUED: "));  // the second run never started; --resume runs it
  // torchrun's tee copies rank 0's last lines a moment after the process ended.
  for (int i = 0; i < 100 && read_file(dir + "/a.log").find("stopped: a rank is gone") == std::string::npos; ++i)
    std::this_thread::sleep_for(100ms);
  CHECK_THAT(read_file(dir + "/a.log"), Catch::Contains("stopped: a rank is gone"));
  hosts.kill_host(0);
  wait_for_exit(a, 10);
  wait_for_exit(b, 10);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a rank cut off from rank 0 exits within its run's timeout and the stated grace",
          "[cli][e2e][multihost][slow][needs-root]") {
  NetHosts hosts(2);
  if (!hosts.ok()) {
    LACONIC_SKIP("network namespaces cannot be made here: " << hosts.why());
  }
  const auto dir = make_temp_dir();
  write_file(dir + "/cut.lua", sweep("cut", 2, "epochs = 1000, timeout = 10,"));  // far longer than the test
  const std::string store = " --world 2 --store tcp://" + hosts.address(0) + ":29401";
  const pid_t b = hosts.start(1, dir, "laconic run cut.lua --rank 1" + store, "b.log");
  const pid_t a = hosts.start(0, dir, "laconic run cut.lua --db cut.db --progress-every 1 --rank 0" + store, "a.log");
  const bool training = every_worker_trains(dir + "/cut.db", 2);
  INFO("host 0:\n" << read_file(dir + "/a.log") << "\nhost 1:\n" << read_file(dir + "/b.log"));
  REQUIRE(training);
  hosts.set_link(1, false);
  const auto cut = std::chrono::steady_clock::now();
  const auto since_cut = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count(); };
  std::optional<double> rank0_ended;
  int rank0_status = -1;
  while ((!rank0_ended || !hosts.pids_named(1, "laconic").empty()) && since_cut() < 120) {
    if (!rank0_ended && ::waitpid(a, &rank0_status, WNOHANG) == a) rank0_ended = since_cut();
    std::this_thread::sleep_for(200ms);
  }
  const double seconds = since_cut();
  INFO("host 1's laconic processes ended " << seconds << " s after its link went down, rank 0 after "
                                           << rank0_ended.value_or(-1) << " s");
  // Each side within the run's timeout (10 s) and its stated grace; some slack for a loaded machine.
  CHECK(hosts.pids_named(1, "laconic").empty());
  CHECK(seconds < 10 + controller::kRankZeroSilenceGraceSeconds + 10);
  CHECK(exit_status(wait_for_exit(b, 10)) == 1);
  CHECK_THAT(read_file(dir + "/b.log"), Catch::Contains("rank 0 (" + hosts.address(0) + ") silent for "));
  REQUIRE(rank0_ended);
  CHECK(*rank0_ended < 10 + controller::kFailureGraceSeconds + 5);
  CHECK(WIFEXITED(rank0_status));
  CHECK(WEXITSTATUS(rank0_status) == 1);
  // Rank 0 said what it waited on while the run stalled, a line a second (--progress-every 1),
  // and stops naming the rank it lost, with one figure in the run's error and its stop line.
  const std::string log = read_file(dir + "/a.log");
  CHECK_THAT(log, Catch::Contains("waiting: no word from worker 1 (") && Catch::Contains("stopped: a rank is gone"));
  const std::string error = query_text(dir + "/cut.db", "SELECT error FROM runs WHERE status = 'FAILED'");
  const auto lost = error.find("worker 1 (");
  REQUIRE(lost != std::string::npos);
  const std::string cause = error.substr(lost, error.find(';', lost) - lost);
  CHECK_THAT(cause, Catch::Contains(" lost: no sign of life for ") && Catch::Contains("no answer to rank 0's kill"));
  CHECK_THAT(log, Catch::Contains("cut: " + cause));
  hosts.set_link(1, true);
  std::filesystem::remove_all(dir);
}
