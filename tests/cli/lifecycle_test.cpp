// The life of a run across crashes: a controller killed mid-run leaves a stale RUNNING run that
// `--resume` continues from its checkpoint, bit for bit; a diverging run ends DIVERGED; a resume
// of an edited experiment file is refused unless forced.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

using namespace laconic;
using namespace laconic::testing;
using namespace std::chrono_literals;

namespace {

// Every worker sleeps 30 ms a step (a straggler delay, which changes no number), so that the
// controller can be killed while the run is going.
const char* const kSlowRun =
    "  epochs = 2,\n"
    "  max_steps = 12,\n"
    "  batch_size = 16,\n"
    "  schedule = synchronous { stragglers = 2, straggler_delay = 0.03 },\n";

std::int64_t checkpoint_step(const std::string& db_path) {
  try {
    auto db = storage::Database::open_read_only(db_path);
    const auto run = storage::find_run(*db, 1);
    return run && run->checkpoint_step ? *run->checkpoint_step : -1;
  } catch (const std::exception&) {
    return -1;  // not created yet, or busy: ask again
  }
}

// (step, worker) -> train_loss of run `id`.
std::map<std::pair<std::int64_t, int>, double> losses_by_step_and_rank(const std::string& db_path, std::int64_t id) {
  auto db = storage::Database::open_read_only(db_path);
  std::map<std::pair<std::int64_t, int>, double> out;
  for (const auto& r : storage::metrics_of(*db, id, "train_loss")) {
    const bool fresh = out.emplace(std::make_pair(r.step, r.worker), r.value).second;
    CHECK(fresh);  // no step recorded twice
  }
  return out;
}

}  // namespace

TEST_CASE("a run whose controller was killed is stale, and --resume continues it from its checkpoint exactly",
          "[cli][e2e][resume]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/resume.lua", tiny_experiment("resume", kSlowRun));
  const std::string db_path = dir + "/r.db";
  const pid_t controller = start_laconic(dir, {"run", "resume.lua", "--db", "r.db", "--checkpoint-every", "5"});
  REQUIRE(controller > 0);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (checkpoint_step(db_path) < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  REQUIRE(::kill(controller, SIGKILL) == 0);  // a crash: nobody records a final status
  int status = 0;
  REQUIRE(::waitpid(controller, &status, 0) == controller);
  const std::int64_t resume_at = checkpoint_step(db_path);
  INFO(read_file(dir + "/.stdout") << read_file(dir + "/.stderr"));
  REQUIRE(resume_at >= 10);
  REQUIRE(resume_at < 24);  // killed before the end

  const auto listing = run_laconic(dir, "runs --db r.db");
  CHECK_THAT(listing.out, Catch::Contains("RUNNING (stale)"));

  const auto resumed = run_laconic(dir, "run resume.lua --db r.db --resume", 180);
  INFO(resumed.out << resumed.err);
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.out, Catch::Contains("resuming run 1 at step " + std::to_string(resume_at)));
  const auto reference = run_laconic(dir, "run resume.lua --db reference.db", 180);
  REQUIRE(reference.status == 0);

  {
    auto db = storage::Database::open_read_only(db_path);
    const auto runs = storage::list_runs(*db);
    REQUIRE(runs.size() == 1);  // continued in place, not run again
    CHECK(runs[0].status == storage::RunStatus::Finished);
    CHECK(runs[0].attempts == 2);
    auto ref_db = storage::Database::open_read_only(dir + "/reference.db");
    CHECK(runs[0].final_test_accuracy == storage::find_run(*ref_db, 1)->final_test_accuracy);
  }
  const auto got = losses_by_step_and_rank(db_path, 1);
  CHECK(got.size() == 48);  // 24 steps x 2 workers, each once
  CHECK(got == losses_by_step_and_rank(dir + "/reference.db", 1));
  // Every metric key as many times as in the undisturbed run: the once-per-run decoded_payloads
  // (worker 0's first step, before the checkpoint) not again after the resume.
  const std::string per_key = "query \"SELECT key, count(*) AS n FROM metrics WHERE run_id = 1 GROUP BY key ORDER BY key\"";
  const auto resumed_rows = run_laconic(dir, per_key + " --db r.db", 60);
  const auto reference_rows = run_laconic(dir, per_key + " --db reference.db", 60);
  CHECK(resumed_rows.status == 0);
  CHECK_THAT(reference_rows.out, Catch::Contains("decoded_payloads"));
  CHECK(resumed_rows.out == reference_rows.out);
  CHECK_FALSE(std::filesystem::exists(db_path + ".checkpoints/run-1"));  // a finished run keeps none
  std::filesystem::remove_all(dir);
}

TEST_CASE("a diverging run ends DIVERGED with its reason; --resume skips it and refuses an edited file",
          "[cli][e2e][diverged]") {
  const auto dir = make_temp_dir();
  const std::string text =
      "experiment {\n"
      "  name = \"boom\",\n"
      "  optimizer = sgd { lr = 1e4 },\n"
      "  batch_size = 32,\n"
      "  workers = 2,\n"
      "  max_steps = 40,\n"
      "  eval_limit = 100,\n"
      "  timeout = 10,\n"
      "}\n";
  write_file(dir + "/boom.lua", text);
  const auto first = run_laconic(dir, "run boom.lua --db b.db", 120);
  INFO(first.out << first.err);
  CHECK(first.status == 0);  // a diverged run is a result, not a failure of the tool
  CHECK_THAT(first.out, Catch::Contains("1 runs, 0 finished, 0 failed, 1 diverged"));
  {
    auto db = storage::Database::open_read_only(dir + "/b.db");
    const auto runs = storage::list_runs(*db);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].status == storage::RunStatus::Diverged);
    CHECK_THAT(runs[0].error, Catch::StartsWith("training loss"));
  }
  const auto again = run_laconic(dir, "run boom.lua --db b.db --resume", 60);
  CHECK(again.status == 0);
  CHECK_THAT(again.out, Catch::Contains("already diverged as run 1, skipped"));

  write_file(dir + "/boom.lua", "-- edited\n" + text);
  const auto refused = run_laconic(dir, "run boom.lua --db b.db --resume", 60);
  CHECK(refused.status == 2);
  CHECK_THAT(refused.err,
             Catch::Contains("experiment 'boom' changed since it was recorded") && Catch::Contains("--force"));
  const auto forced = run_laconic(dir, "run boom.lua --db b.db --resume --force", 60);
  CHECK(forced.status == 0);
  CHECK_THAT(forced.out, Catch::Contains("already diverged as run 1, skipped"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Ctrl-C says how to continue the same sweep, --set flags included, and that command does", "[cli][e2e][resume]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/stop.lua", tiny_experiment("stop", kSlowRun));
  const pid_t controller = start_laconic(
      dir, {"run", "stop.lua", "--db", "s.db", "--checkpoint-every", "5", "--set", "seeds=1,2", "--set", "max_steps=20"});
  REQUIRE(controller > 0);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (checkpoint_step(dir + "/s.db") < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  REQUIRE(::kill(controller, SIGINT) == 0);
  int status = 0;
  REQUIRE(::waitpid(controller, &status, 0) == controller);
  const std::string out = read_file(dir + "/.stdout");
  INFO(out << read_file(dir + "/.stderr"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const std::string command = "laconic run --resume stop.lua --set seeds=1,2 --set max_steps=20 --db s.db";
  REQUIRE_THAT(out, Catch::Contains("`" + command + "` continues them"));

  // Following it: the same two runs finish (2 epochs of 20 steps each), none recorded anew.
  const auto resumed = run_laconic(dir, command.substr(std::string("laconic ").size()), 180);
  INFO(resumed.out << resumed.err);
  CHECK(resumed.status == 0);
  auto db = storage::Database::open_read_only(dir + "/s.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    CHECK(run.status == storage::RunStatus::Finished);
    CHECK(storage::metrics_of(*db, run.id, "train_loss").size() == 80);  // 2 x 20 steps x 2 workers, once each
  }
  db.reset();
  std::filesystem::remove_all(dir);
}
