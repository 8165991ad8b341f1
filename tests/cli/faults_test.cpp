// A user's bad night, as tests: a frozen worker, a worker dead before the rendezvous, a
// controller killed mid-sweep and resumed, a database locked for half a minute, a full disk,
// damaged and archived databases. Each ends with a final status for every run, nothing lost,
// no process or rendezvous directory left, and a message that names the cause and the next step.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "faults_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace laconic::testing::faults;
using namespace std::chrono_literals;

TEST_CASE("a frozen worker shows as silent, is then called hung, killed and named, and the sweep goes on",
          "[cli][faults][hung][slow]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/f.lua", tiny_experiment("f",
                                             "  max_steps = 1500,\n  timeout = 20,\n"
                                             "  compressor = sweep { none(), topk { ratio = 0.01 } },\n"));
  const pid_t controller = start_laconic(dir, {"run", "f.lua", "--db", "f.db"});
  REQUIRE(controller > 0);
  pid_t rank0 = -1;
  REQUIRE(eventually([&] { return (rank0 = find_worker(controller, 0)) > 0; }, 60));
  // Let it pass the rendezvous and train a little, then freeze it.
  std::this_thread::sleep_for(3s);
  REQUIRE(::kill(rank0, SIGSTOP) == 0);
  const auto stopped_at = Clock::now();
  // Before the timeout, a listing tells the silent run from a healthy one.
  const bool labelled = eventually(
      [&] {
        const auto r = run_laconic(dir, "runs --db f.db", 30);
        return r.out.find("RUNNING (workers silent ") != std::string::npos;
      },
      19);
  CHECK(labelled);
  REQUIRE(eventually([&] { return ::kill(rank0, 0) != 0; }, 60));  // killed by the controller
  const double to_kill = std::chrono::duration<double>(Clock::now() - stopped_at).count();
  const auto exited = wait_for_exit(controller, 180);
  REQUIRE(exited);
  INFO(read_file(dir + "/.stdout") << read_file(dir + "/.stderr"));
  CHECK(WEXITSTATUS(*exited) == 1);
  CHECK(to_kill < 20 + 5 + 5);  // the timeout, then at most the grace after its peer gave up
  const auto runs = runs_of(dir + "/f.db");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == storage::RunStatus::Failed);
  CHECK_THAT(runs[0].error, Catch::Contains("worker 0 hung: no sign of life for"));
  CHECK(runs[1].status == storage::RunStatus::Finished);
  CHECK(no_store_dir_of(controller));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a worker that dies before the rendezvous fails its run within seconds", "[cli][faults]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/d.lua", tiny_experiment("d", "  max_steps = 20,\n  timeout = 60,\n"));
  const pid_t controller = start_laconic(dir, {"run", "d.lua", "--db", "d.db"});
  REQUIRE(controller > 0);
  pid_t rank1 = -1;
  REQUIRE(eventually([&] { return (rank1 = find_worker(controller, 1)) > 0; }, 60));
  REQUIRE(::kill(rank1, SIGKILL) == 0);  // within milliseconds of its start: long before rendezvous
  const auto killed_at = Clock::now();
  const auto exited = wait_for_exit(controller, 120);
  REQUIRE(exited);
  const double took = std::chrono::duration<double>(Clock::now() - killed_at).count();
  INFO(read_file(dir + "/.stdout") << read_file(dir + "/.stderr"));
  CHECK(took < 15);  // not the 60 s timeout
  const auto runs = runs_of(dir + "/d.db");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == storage::RunStatus::Failed);
  CHECK_THAT(runs[0].error, Catch::Contains("worker 1 was killed by signal 9"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a resume after the controller was killed continues every run in place, never twice",
          "[cli][faults][resume]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/r.lua", tiny_experiment("r",
                                             "  max_steps = 600,\n"
                                             "  compressor = sweep { none(), topk { ratio = 0.01 } },\n"));
  const pid_t controller = start_laconic(dir, {"run", "r.lua", "--db", "r.db"});
  REQUIRE(controller > 0);
  REQUIRE(eventually([&] { return find_worker(controller, 0) > 0; }, 60));
  std::this_thread::sleep_for(2s);
  REQUIRE(::kill(controller, SIGKILL) == 0);  // its workers die with it
  REQUIRE(wait_for_exit(controller, 30));
  {
    const auto before = runs_of(dir + "/r.db");
    REQUIRE(before.size() == 2);
    CHECK(before[0].status_label() == "RUNNING (stale)");
    CHECK(before[1].status == storage::RunStatus::Queued);
  }
  // Its rendezvous directory is left behind; the next run removes it.
  CHECK_FALSE(no_store_dir_of(controller));
  const auto r = run_laconic(dir, "run --resume r.lua --db r.db");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out,
             Catch::Contains("removed ") && Catch::Contains("the rendezvous directory of a controller that died"));
  CHECK(no_store_dir_of(controller));
  const auto after = runs_of(dir + "/r.db");
  REQUIRE(after.size() == 2);  // the same two rows, no duplicate
  CHECK(after[0].status == storage::RunStatus::Finished);
  CHECK(after[0].attempts == 2);
  CHECK(after[1].status == storage::RunStatus::Finished);
  CHECK(after[1].attempts == 1);
  // Run 1's rows are those of one whole run, not two runs' worth.
  CHECK(storage::metrics_of(*storage::Database::open_read_only(dir + "/r.db"), after[0].id, "train_loss").size() ==
        1200);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a database locked by another process for 30 s stalls neither training nor the sweep, and loses no row",
          "[cli][faults][lock][slow]") {
  const auto dir = make_temp_dir();
  // Undisturbed, for the row counts.
  const auto expected = write_sweep_and_train_calm(dir, "l", 800, "none(), topk { ratio = 0.01 }");

  // Gloo gives up after 10 s: the lock outlasts it three times, so the workers must not wait on it.
  const pid_t controller = start_laconic(dir, {"run", "l.lua", "--db", "l.db", "--set", "timeout=10"});
  REQUIRE(controller > 0);
  REQUIRE(eventually([&] { return find_worker(controller, 0) > 0; }, 60));
  std::this_thread::sleep_for(1s);
  {
    WriteLock lock(dir + "/l.db");
    std::this_thread::sleep_for(30s);
  }
  const double released = storage::unix_now();
  const auto exited = wait_for_exit(controller, 300);
  REQUIRE(exited);
  const std::string err = read_file(dir + "/.stderr");
  INFO(read_file(dir + "/.stdout") << err);
  CHECK(WEXITSTATUS(*exited) == 0);
  CHECK_THAT(err, Catch::Contains("cannot take writes") && Catch::Contains("takes writes again; nothing was lost"));
  CHECK(err.find("lost ") == std::string::npos);
  for (const auto& run : runs_of(dir + "/l.db")) CHECK(run.status == storage::RunStatus::Finished);
  CHECK(rows_per_run(dir + "/l.db") == expected);
  CHECK(err.find("Timed out") == std::string::npos);
  // Run 1 ended while the lock was held (it trains in a third of the lock's time undisturbed):
  // its recorded end is when it ended, not when the database took the write.
  const auto calm = runs_of(dir + "/calm.db");
  const auto locked = runs_of(dir + "/l.db");
  if (calm.at(0).ended - calm.at(0).started < 10) CHECK(locked.at(0).ended < released);
  if (locked.at(0).ended < released - 5) {
    // The sweep went on under the lock: run 2 trained meanwhile, its claim written when the
    // lock ended with the start it really had, within seconds of run 1's end.
    CHECK_THAT(read_file(dir + "/.stdout"), Catch::Contains("is locked by another process; training run"));
    CHECK(locked.at(1).started < released);
    CHECK(locked.at(1).started - locked.at(0).ended < 5);
  }
  CHECK(locked.at(1).attempts == 1);
  CHECK_FALSE(std::filesystem::exists(dir + "/l.db.claims"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a lock past --db-retry: what ended goes to the journal, what was never claimed stays QUEUED, and "
          "--resume completes the sweep once",
          "[cli][faults][lock][slow]") {
  const auto dir = make_temp_dir();
  const auto expected = write_sweep_and_train_calm(dir, "g", 300, "none(), topk { ratio = 0.01 }, fp16()");

  const pid_t controller = start_laconic(dir, {"run", "g.lua", "--db", "g.db", "--db-retry", "10"});
  REQUIRE(controller > 0);
  REQUIRE(eventually([&] { return find_worker(controller, 0) > 0; }, 60));
  WriteLock lock(dir + "/g.db");
  const auto exited = wait_for_exit(controller, 180);  // the lock outlasts the controller
  // Read before any other command writes the same .stdout and .stderr.
  const std::string err = read_file(dir + "/.stderr"), out = read_file(dir + "/.stdout");
  if (const std::size_t at = err.find("to the recovery journal "); at != std::string::npos) {
    // Replayed while the lock still holds: refused, naming the database it writes.
    const std::size_t from = at + std::string("to the recovery journal ").size();
    const std::string journal = err.substr(from, err.find(';', from) - from);
    const auto early = run_laconic(dir, "recover " + journal, 60);
    INFO(early.out << early.err);
    CHECK(early.status != 0);
    CHECK_THAT(early.err, Catch::Contains("g.db") && !Catch::Contains("laconic.db"));
  }
  lock.release();
  REQUIRE(exited);
  INFO(out << err);
  CHECK(WEXITSTATUS(*exited) == 1);
  // Given up while run 3 trained, or when the sweep ended: either way after --db-retry.
  CHECK_THAT(err, Catch::Contains("g.db") && Catch::Contains("10 s (--db-retry)"));
  // Run 1 ended during the lock: its rows and ending are in the journal. Run 2 trained meanwhile,
  // its claim never written: nothing of it is kept, and it is still QUEUED.
  CHECK_THAT(err, Catch::Contains("run 1 ending FINISHED") && Catch::Contains("to the recovery journal"));
  CHECK_THAT(err, Catch::Contains("trained while the database was locked and"));
  const auto stopped = runs_of(dir + "/g.db");
  REQUIRE(stopped.size() == 3);
  CHECK(stopped.at(1).status == storage::RunStatus::Queued);
  CHECK(stopped.at(1).attempts == 0);
  CHECK(rows_per_run(dir + "/g.db").at(1) == 0);

  const auto resumed = run_laconic(dir, "run --resume g.lua --db g.db");
  INFO(resumed.out << resumed.err);
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.err + resumed.out, Catch::Contains("replayed the recovery journal"));
  for (const auto& run : runs_of(dir + "/g.db")) {
    CHECK(run.status == storage::RunStatus::Finished);
    CHECK(run.attempts == 1);
  }
  CHECK(rows_per_run(dir + "/g.db") == expected);
  CHECK_FALSE(std::filesystem::exists(dir + "/g.db.claims"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a signal while the database is locked sends what is kept to the journal at once, and the controller "
          "exits within seconds",
          "[cli][faults][lock][slow]") {
  const auto dir = make_temp_dir();
  const auto expected = write_sweep_and_train_calm(dir, "s", 60, "none()");
  const pid_t controller = start_laconic(dir, {"run", "s.lua", "--db", "s.db", "--db-retry", "600"});
  REQUIRE(controller > 0);
  REQUIRE(eventually([&] { return find_worker(controller, 0) > 0; }, 60));
  WriteLock lock(dir + "/s.db");
  // The run ends during the lock: its rows are kept, the sweep waits for the database.
  REQUIRE(eventually([&] { return read_file(dir + "/.stdout").find("kept until database") != std::string::npos; },
                     120));
  const auto signalled = Clock::now();
  ::kill(controller, SIGINT);
  const auto exited = wait_for_exit(controller, 30);  // --db-retry is 600 s: only the signal ends it
  const double seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  lock.release();
  REQUIRE(exited);
  const std::string err = read_file(dir + "/.stderr"), out = read_file(dir + "/.stdout");
  INFO(out << err << "\nexited after " << seconds << " s");
  CHECK(seconds < 15);
  CHECK_THAT(out, Catch::Contains("stopped by a signal while the database took no writes"));
  CHECK_FALSE(std::filesystem::exists(dir + "/s.db.claims"));
  CHECK(WEXITSTATUS(*exited) != 0);
  CHECK_THAT(err, Catch::Contains("stopped (Ctrl-C or SIGTERM) while database s.db took no writes") &&
                      Catch::Contains("run 1 ending FINISHED") && Catch::Contains("to the recovery journal"));
  // Replayed, the journal brings back every row the undisturbed run wrote.
  const auto resumed = run_laconic(dir, "run --resume s.lua --db s.db");
  INFO(resumed.out << resumed.err);
  CHECK(resumed.status == 0);
  CHECK(rows_per_run(dir + "/s.db") == expected);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a full disk sends what is pending to a journal in TMPDIR; laconic recover replays it whole, once",
          "[cli][faults][disk][needs-root]") {
  if (!is_root()) {
    LACONIC_SKIP("not root: no tmpfs to fill; the full-disk test needs CAP_SYS_ADMIN");
  }
  const auto dir = make_temp_dir();
  Tmpfs disk(dir + "/disk", "8m");
  if (!disk.mounted()) {
    LACONIC_SKIP("cannot mount a tmpfs here; the full-disk test is skipped");
  }
  write_file(dir + "/disk/d.lua", tiny_experiment("d", "  max_steps = 300,\n"));
  REQUIRE(run_laconic(dir, "run disk/d.lua --db calm.db --quiet").status == 0);
  const auto expected = rows_per_run(dir + "/calm.db");

  // A budget the run's last 300 steps fit in on a loaded machine: the give-up comes once they
  // are trained, with every row in the journal (a shorter one may stop the run first: KILLED).
  const pid_t controller = start_laconic(dir, {"run", "disk/d.lua", "--db", "disk/d.db", "--db-retry", "20"});
  REQUIRE(controller > 0);
  REQUIRE(eventually([&] { return find_worker(controller, 0) > 0; }, 60));
  {
    // Fill what is left of the disk.
    std::ofstream filler(dir + "/disk/filler", std::ios::binary);
    const std::string block(1 << 16, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {}
  }
  const auto exited = wait_for_exit(controller, 180);
  REQUIRE(exited);
  const std::string err = read_file(dir + "/.stderr");
  INFO(read_file(dir + "/.stdout") << err);
  CHECK(WEXITSTATUS(*exited) == 1);
  CHECK_THAT(err, Catch::Contains("gave up on database disk/d.db after 20 s"));
  // The cause named is the full disk, not a lock (SQLite's code of the failed write, not BUSY).
  CHECK_THAT(err, Catch::Contains("the disk holding database disk/d.db is full"));
  CHECK_THAT(err, !Catch::Contains("stayed locked"));
  // The advice names the database the controller ran with.
  CHECK_THAT(err, Catch::Contains("`laconic run --resume disk/d.lua --db disk/d.db`"));
  const auto at = err.find("recovery journal ");
  REQUIRE(at != std::string::npos);
  const std::string journal = err.substr(at + 17, err.find(';', at) - at - 17);
  CHECK(journal.starts_with(std::filesystem::temp_directory_path().string()));  // beside the db: full
  CHECK(std::filesystem::exists(journal));
  CHECK_FALSE(std::filesystem::exists(dir + "/disk/d.db.journal"));

  std::filesystem::remove(dir + "/disk/filler");
  // Replayed from another directory: the journal names its database by its absolute path.
  std::filesystem::create_directories(dir + "/elsewhere");
  auto r = run_laconic(dir + "/elsewhere", "recover '" + journal + "'");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("metric rows"));
  CHECK_THAT(r.out, Catch::Contains("into " + dir + "/disk/d.db"));
  CHECK(rows_per_run(dir + "/disk/d.db") == expected);
  const auto runs = runs_of(dir + "/disk/d.db");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == storage::RunStatus::Finished);  // its ending was in the journal
  // Every fact the undisturbed run recorded, the run's last ones too (they were pending in the journal).
  {
    auto calm = storage::Database::open_read_only(dir + "/calm.db");
    auto replayed = storage::Database::open_read_only(dir + "/disk/d.db");
    std::set<std::string> want, got;
    for (const auto& [key, value] : storage::facts_of(*calm, runs_of(dir + "/calm.db").at(0).id)) want.insert(key);
    for (const auto& [key, value] : storage::facts_of(*replayed, runs[0].id)) got.insert(key);
    CHECK(got == want);
  }
  // Exactly once: the journal was renamed, and the same file again is refused.
  CHECK_FALSE(std::filesystem::exists(journal));
  std::filesystem::rename(journal + ".replayed", journal);
  r = run_laconic(dir, "recover '" + journal + "'");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("was already replayed"));
  CHECK(rows_per_run(dir + "/disk/d.db") == expected);
  std::filesystem::remove(journal);
  disk.unmount();
  std::filesystem::remove_all(dir);
}
