#include <catch2/catch.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

TEST_CASE("a worker killed with SIGKILL fails its run, keeps its metrics, and the sweep goes on",
          "[cli][e2e][killed]") {
  const auto dir = make_temp_dir();
  // Run 1 is long (a whole epoch at batch 8); run 2 takes 4 steps.
  write_file(dir + "/kill.lua", tiny_experiment("kill", "  batch_size = 8,\n  max_steps = sweep { 0, 4 },\n"));
  const std::string db_path = dir + "/k.db";
  const pid_t controller = start_laconic(dir, {"run", "kill.lua", "--db", "k.db"});
  REQUIRE(controller > 0);

  // Wait until run 1 has recorded some steps, then kill its rank-1 worker.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (recorded_steps(db_path, 1) < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  const pid_t victim = find_worker(controller, 1);
  REQUIRE(victim > 0);
  REQUIRE(::kill(victim, SIGKILL) == 0);

  const auto exited = wait_for_exit(controller, 180);
  if (!exited) FAIL("the controller hung after a worker was killed");
  const int status = *exited;
  const std::string out = read_file(dir + "/.stdout");
  INFO(out << read_file(dir + "/.stderr"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK_THAT(out, Catch::Contains("2 runs, 1 finished, 1 failed"));

  auto db = storage::Database::open_read_only(db_path);
  auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == storage::RunStatus::Failed);
  // The cause first: worker 0's failure ("Connection reset by peer") only follows from it.
  CHECK_THAT(runs[0].error, Catch::StartsWith("worker 1 was killed by signal 9"));
  CHECK(storage::metrics_of(*db, runs[0].id, "train_loss").size() >= 10);
  CHECK(runs[1].status == storage::RunStatus::Finished);
  CHECK(storage::metrics_of(*db, runs[1].id, "train_loss").size() == 8);

  char* message = nullptr;
  std::string integrity;
  sqlite3_exec(
      db->handle(), "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &integrity, &message);
  sqlite3_free(message);
  CHECK(integrity == "ok");
  std::filesystem::remove_all(dir);
}
