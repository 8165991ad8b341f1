// elastic = true under a launcher (the explicit --rank/--world/--store flags, every rank a laconic
// process of its own, here on one host through a file store): a rank's worker that dies is
// relaunched by its rank's laconic process and rejoins; a rank whose laconic process dies, or whose
// host's link goes down (network namespaces as hosts, as root), is left out and the run finishes
// without it.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.hpp"
#include "elastic_harness.hpp"
#include "free_port.hpp"
#include "net_hosts.hpp"
#include "skip.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

namespace {

// Three ranks of one launch of dir/f.lua through `store` ("file": a directory; "tcp": a TCP store
// rank 0 serves on loopback), each started in a directory of its own (dir/rank1, dir/rank2; rank
// 0 in dir, its database f.db).
struct Launch {
  std::string dir = make_temp_dir();
  std::vector<pid_t> ranks;

  Launch(int epochs, const std::string& kind) {
    for (const std::string home : {dir, dir + "/rank1", dir + "/rank2"}) {
      std::filesystem::create_directories(home);
      write_file(home + "/f.lua", elastic_experiment("", "true", epochs, 10));
    }
    const std::string store =
        kind == "file" ? "file://" + dir + "/store" : "tcp://127.0.0.1:" + std::to_string(free_port());
    for (int rank : {1, 2, 0}) {
      std::vector<std::string> args{
          "run", "f.lua",   "--quiet", "--launch-timeout", "60", "--rank", std::to_string(rank), "--world",
          "3",   "--store", store};
      if (rank == 0) args.insert(args.end(), {"--db", "f.db"});
      ranks.push_back(start_laconic(rank == 0 ? dir : dir + "/rank" + std::to_string(rank), args));
    }
  }
  pid_t rank(int r) const { return ranks.at(r == 0 ? 2 : static_cast<std::size_t>(r - 1)); }
  std::string output(int r) const {
    const std::string home = r == 0 ? dir : dir + "/rank" + std::to_string(r);
    return read_file(home + "/.stdout") + read_file(home + "/.stderr");
  }
  // Each rank's exit status (-1: killed by a signal or by the wait's end).
  int status(int r, double seconds) const {
    const auto exited = wait_for_exit(rank(r), seconds);
    return exited && WIFEXITED(*exited) ? WEXITSTATUS(*exited) : -1;
  }
};

std::string relaunches_of(storage::Database& db) {
  const storage::RunFacts facts = storage::run_facts_of(db, 1);
  return facts.text.count(storage::fact::kElasticRelaunches) ? facts.text.at(storage::fact::kElasticRelaunches) : "";
}

}  // namespace

TEST_CASE("under a launcher a rank's dead worker is relaunched by its rank's laconic process and rejoins",
          "[cli][e2e][elastic][multihost]") {
  ::setenv("LACONIC_FAULT_KILL", "2:109", 1);  // worker 2's first launch dies at its 109th message
  Launch launch(3, "file");
  ::unsetenv("LACONIC_FAULT_KILL");
  const int zero = launch.status(0, 240), one = launch.status(1, 30), two = launch.status(2, 30);
  INFO("rank 0:\n" << launch.output(0) << "\nrank 1:\n" << launch.output(1) << "\nrank 2:\n" << launch.output(2));
  CHECK(zero == 0);
  CHECK(one == 0);
  CHECK(two == 0);
  CHECK_THAT(launch.output(2), Catch::Contains("worker killed by signal 9"));
  CHECK_THAT(launch.output(2), Catch::Contains("worker relaunch 1 exited 0"));
  auto db = storage::Database::open_read_only(launch.dir + "/f.db");
  REQUIRE(storage::list_runs(*db).size() == 1);
  CHECK(storage::list_runs(*db).front().status == storage::RunStatus::Finished);
  CHECK_THAT(relaunches_of(*db), Catch::StartsWith("worker 2 (") && Catch::EndsWith("was killed by signal 9 (Killed) "
                                                                                    "(relaunched)"));
  std::int64_t left = -1, back = -1;
  for (const auto& m : storage::metrics_of(*db, 1, "member_change")) {
    CHECK(m.worker == 2);
    (m.value < 0 ? left : back) = m.step;
  }
  CHECK((left > 0 && back > left));
  for (const auto& [at, values] : loss_rows(*db, 1)) CHECK(values.size() == 1);
  std::filesystem::remove_all(launch.dir);
}

TEST_CASE("under a launcher an elastic run goes on without a rank whose laconic process died, and finishes",
          "[cli][e2e][elastic][multihost]") {
  Launch launch(12, "tcp");  // whose client a rank's failure watch shares with its main thread
  const std::string db_path = launch.dir + "/f.db";
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (recorded_steps(db_path, 1) < 300 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  REQUIRE(::kill(launch.rank(2), SIGKILL) == 0);  // its worker dies with it (PR_SET_PDEATHSIG)
  const int zero = launch.status(0, 240), one = launch.status(1, 30);
  CHECK(launch.status(2, 10) == -1);  // reaped: killed
  INFO("rank 0:\n" << launch.output(0) << "\nrank 1:\n" << launch.output(1));
  CHECK(zero == 0);  // every run had started and finished: the lost rank fails nothing
  CHECK(one == 0);
  CHECK_THAT(launch.output(0), Catch::Contains("1 finished, 0 failed, 0 diverged, 0 skipped, a rank is gone"));
  CHECK_THAT(launch.output(0), Catch::Contains("its process or its host went away; every run had started"));
  auto db = storage::Database::open_read_only(db_path);
  REQUIRE(storage::list_runs(*db).size() == 1);
  CHECK(storage::list_runs(*db).front().status == storage::RunStatus::Finished);
  CHECK_THAT(relaunches_of(*db), Catch::StartsWith("worker 2 (") &&
                                     Catch::EndsWith("lost: its connection to rank 0 closed: its process or its host "
                                                     "went away (left the run)"));
  const auto changes = storage::metrics_of(*db, 1, "member_change");
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].worker == 2);
  CHECK(changes[0].value == -1.0);
  const auto rows = loss_rows(*db, 1);
  for (const auto& [at, values] : rows) CHECK(values.size() == 1);
  CHECK(rows.count({0, 12 * 200 - 1}) == 1);  // worker 0 trained to the last step
  CHECK(rows.count({2, 12 * 200 - 1}) == 0);
  std::filesystem::remove_all(launch.dir);
}

TEST_CASE("under a launcher an elastic run goes on without a rank whose host's link went down",
          "[cli][e2e][elastic][multihost][slow][needs-root]") {
  NetHosts hosts(3);
  if (!hosts.ok()) LACONIC_SKIP("network namespaces cannot be made here: " << hosts.why());
  const auto dir = make_temp_dir();
  write_file(dir + "/f.lua", elastic_experiment("", "true", 100, 10));
  const std::string store = " --world 3 --store tcp://" + hosts.address(0) + ":29402";
  std::vector<pid_t> ranks;
  for (int r : {1, 2, 0})
    ranks.push_back(hosts.start(
        r, dir, "laconic run f.lua --quiet --rank " + std::to_string(r) + (r == 0 ? " --db f.db" : "") + store,
        "r" + std::to_string(r) + ".log"));
  const std::string db_path = dir + "/f.db";
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (recorded_steps(db_path, 1) < 300 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  hosts.set_link(2, false);
  // Rank 0 hears nothing from rank 2 for the timeout (10 s), gets no answer to its kill in 5 s,
  // and posts it gone; the members, whose transfers with it ended at the timeout, go on.
  const auto zero = wait_for_exit(ranks[2], 300);
  const auto one = wait_for_exit(ranks[0], 30);
  const auto two = wait_for_exit(ranks[1], 60);
  hosts.set_link(2, true);
  INFO("rank 0:\n"
       << read_file(dir + "/r0.log") << "\nrank 1:\n"
       << read_file(dir + "/r1.log") << "\nrank 2:\n"
       << read_file(dir + "/r2.log"));
  REQUIRE(zero);
  CHECK(WIFEXITED(*zero));
  CHECK(WEXITSTATUS(*zero) == 0);
  CHECK((one && WIFEXITED(*one) && WEXITSTATUS(*one) == 0));
  CHECK((two && WIFEXITED(*two) && WEXITSTATUS(*two) == 1));  // rank 0 silent: it stopped
  CHECK_THAT(read_file(dir + "/r2.log"), Catch::Contains("rank 0 (" + hosts.address(0) + ") silent for "));
  auto db = storage::Database::open_read_only(db_path);
  REQUIRE(storage::list_runs(*db).size() == 1);
  CHECK(storage::list_runs(*db).front().status == storage::RunStatus::Finished);
  CHECK_THAT(relaunches_of(*db), Catch::StartsWith("worker 2 (") && Catch::Contains(" lost: no sign of life for ") &&
                                     Catch::EndsWith("(left the run)"));
  const auto changes = storage::metrics_of(*db, 1, "member_change");
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].worker == 2);
  for (const auto& [at, values] : loss_rows(*db, 1)) CHECK(values.size() == 1);
  std::filesystem::remove_all(dir);
}
