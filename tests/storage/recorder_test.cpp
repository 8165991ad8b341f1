#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::database_path;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

TEST_CASE("run statuses round-trip through their stored text", "[storage][status]") {
  for (RunStatus s : {RunStatus::Queued, RunStatus::Running, RunStatus::Finished, RunStatus::Failed, RunStatus::Killed,
                      RunStatus::Diverged})
    CHECK(run_status_from_string(to_string(s)) == s);
  CHECK(to_string(RunStatus::Diverged) == "DIVERGED");
  // Any case is accepted (`laconic runs --status finished`); a typo is named with the valid ones.
  CHECK(run_status_from_string("finished") == RunStatus::Finished);
  CHECK(run_status_from_string("Diverged") == RunStatus::Diverged);
  CHECK_THROWS_WITH(run_status_from_string("finshed"),
                    Catch::Contains("'finshed'") && Catch::Contains("FINISHED, FAILED"));
}

TEST_CASE("an experiment is recorded once per name and file hash", "[storage][recorder]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto first = recorder.add_experiment("fmnist", "experiments/fmnist.lua", "abc123");
  CHECK(recorder.add_experiment("fmnist", "other/path.lua", "abc123") == first);
  const auto edited = recorder.add_experiment("fmnist", "experiments/fmnist.lua", "def456");
  CHECK(edited != first);
  const auto experiments = list_experiments(*db);
  REQUIRE(experiments.size() == 2);
  CHECK(experiments[0].file_path == "experiments/fmnist.lua");
  CHECK(experiments[1].file_hash == "def456");
}

TEST_CASE("a run goes from QUEUED to RUNNING to FINISHED with its timestamps", "[storage][recorder]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "fmnist.lua", "h1");
  const double before = unix_now();
  const auto config = sample_config("topk", 3);
  const auto run = recorder.add_run(experiment, config);

  auto row = find_run(*db, run);
  REQUIRE(row);
  CHECK(row->status == storage::RunStatus::Queued);
  CHECK(row->name == "compressor=topk,seed=3");
  CHECK(row->seed == 3);
  CHECK(std::isnan(row->started));
  CHECK(row->wall_time == 0);
  CHECK(nlohmann::json::parse(row->swept) == config.swept_json());

  recorder.start_run(run);
  row = find_run(*db, run);
  CHECK(row->status == storage::RunStatus::Running);
  CHECK(row->started >= before);
  CHECK(row->heartbeat == row->started);
  CHECK(std::isnan(row->ended));
  CHECK(row->wall_time >= 0);

  recorder.heartbeat(run);
  CHECK(find_run(*db, run)->heartbeat >= row->started);

  recorder.finish_run(run, RunStatus::Finished);
  row = find_run(*db, run);
  CHECK(row->status == storage::RunStatus::Finished);
  CHECK(row->ended >= row->started);
  CHECK(row->ended <= unix_now());
  CHECK(row->wall_time == Approx(row->ended - row->started));
  CHECK(row->error.empty());

  Statement stored(db->handle(), "SELECT config, host, laconic_version, created FROM runs WHERE id = ?1");
  stored.bind_int64(1, run);
  REQUIRE(stored.step());
  CHECK(stored.column_text(0) == config.to_json().dump());
  CHECK_FALSE(stored.column_text(1).empty());
  CHECK_FALSE(stored.column_text(2).empty());
  CHECK(stored.column_double(3) >= before);
}

TEST_CASE("a failed run keeps its error text", "[storage][recorder]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("qsgd", 1));
  recorder.start_run(run);
  recorder.finish_run(run, RunStatus::Failed, "worker 2 exited with code 134");
  const auto row = find_run(*db, run);
  CHECK(row->status == storage::RunStatus::Failed);
  CHECK(row->error == "worker 2 exited with code 134");
  CHECK_THROWS_AS(recorder.finish_run(run, RunStatus::Running), ConfigError);
}

TEST_CASE("updating a run that does not exist names its id", "[storage][recorder]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  CHECK_THROWS_WITH(recorder.start_run(42), Catch::Contains("no run with id 42"));
  CHECK_THROWS_WITH(recorder.metrics_sink(42), Catch::Contains("no run with id 42"));
  CHECK_THROWS_AS(recorder.add_run(7, sample_config("topk", 1)), StorageError);  // no experiment 7
}

TEST_CASE("a run RUNNING under one controller cannot be started by another", "[storage][recorder][resume]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  auto first = Database::open(path);
  auto second = Database::open(path);
  Recorder a(*first), b(*second);
  const auto run = a.add_run(a.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  CHECK(a.start_run(run));
  CHECK_FALSE(b.start_run(run));  // taken: left alone
  CHECK(find_run(*second, run)->attempts == 1);
  a.finish_run(run, RunStatus::Killed, "interrupted");
  CHECK(b.start_run(run));  // unfinished and free: the second may continue it
  CHECK(find_run(*second, run)->attempts == 2);
}

TEST_CASE("a run is claimed only as it was planned: never once it has a result or another took it",
          "[storage][recorder][resume]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  auto first = Database::open(path);
  auto second = Database::open(path);
  Recorder a(*first), b(*second);
  const auto e = a.add_experiment("e", "e.lua", "h");
  const auto finished = a.add_run(e, sample_config("topk", 1));
  const auto diverged = a.add_run(e, sample_config("topk", 2));
  // Both controllers planned `finished` while it was QUEUED, never started (attempts 0).
  CHECK(a.start_run(finished, 0));
  a.finish_run(finished, RunStatus::Finished);
  CHECK_FALSE(b.start_run(finished, 0));  // trained meanwhile: a result, left alone
  CHECK_FALSE(b.start_run(finished));     // whatever was planned
  CHECK(find_run(*second, finished)->attempts == 1);
  a.start_run(diverged);
  a.finish_run(diverged, RunStatus::Diverged, "loss NaN");
  CHECK_FALSE(b.start_run(diverged));
  // A run that failed under one controller after the other planned it: the plan is stale.
  const auto failed = a.add_run(e, sample_config("qsgd", 1));
  CHECK(a.start_run(failed, 0));
  a.finish_run(failed, RunStatus::Failed, "worker 1 died");
  CHECK_FALSE(b.start_run(failed, 0));
  const double first_start = find_run(*second, failed)->started;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(b.start_run(failed, 1));  // planned after the failure: continued
  CHECK(find_run(*second, failed)->attempts == 2);
  // Its wall time counts from the attempt that ends it, not from the one that failed.
  CHECK(find_run(*second, failed)->started > first_start + 0.01);
}

TEST_CASE("find_finished finds only a FINISHED run with the same config", "[storage][recorder]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "fmnist.lua", "h");
  const auto topk = sample_config("topk", 1);
  const auto qsgd = sample_config("qsgd", 1);
  const auto failed = recorder.add_run(experiment, topk);
  recorder.start_run(failed);
  recorder.finish_run(failed, RunStatus::Failed, "boom");
  CHECK_FALSE(recorder.find_finished("fmnist-topk", topk));

  const auto done = recorder.add_run(experiment, topk);
  recorder.start_run(done);
  recorder.finish_run(done, RunStatus::Finished);
  CHECK(recorder.find_finished("fmnist-topk", topk) == done);
  CHECK_FALSE(recorder.find_finished("fmnist-topk", qsgd));
  CHECK_FALSE(recorder.find_finished("other-experiment", topk));
}

TEST_CASE("find_unfinished finds the newest run of a config that did not finish", "[storage][recorder][resume]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "fmnist.lua", "h1", "experiment { }");
  const auto config = sample_config("topk", 1);
  CHECK_FALSE(recorder.find_unfinished("fmnist-topk", config));
  const auto killed = recorder.add_run(experiment, config);
  recorder.start_run(killed);
  recorder.finish_run(killed, RunStatus::Killed, "SIGTERM");
  CHECK(recorder.find_unfinished("fmnist-topk", config) == killed);
  CHECK_FALSE(recorder.find_unfinished("fmnist-topk", sample_config("topk", 2)));
  CHECK_FALSE(recorder.find_unfinished("other", config));

  // Starting it again clears the end and the error and counts the attempt.
  recorder.start_run(killed);
  auto row = find_run(*db, killed);
  REQUIRE(row);
  CHECK(row->status == storage::RunStatus::Running);
  CHECK(row->attempts == 2);
  CHECK(row->error.empty());
  CHECK(std::isnan(row->ended));
  CHECK(row->controller_pid == ::getpid());
  CHECK_FALSE(row->stale);  // this process is alive and just beat
  recorder.finish_run(killed, RunStatus::Finished);
  CHECK_FALSE(recorder.find_unfinished("fmnist-topk", config));
  Statement source(db->handle(), "SELECT source FROM experiments WHERE id = ?1");
  source.bind_int64(1, experiment);
  REQUIRE(source.step());
  CHECK(source.column_text(0) == "experiment { }");
}

TEST_CASE("a RUNNING run whose heartbeat stopped or whose controller is gone is stale", "[storage][recorder][stale]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("x", "x.lua", "h");
  const auto run = recorder.add_run(experiment, sample_config("none", 1));
  recorder.start_run(run);
  CHECK_FALSE(find_run(*db, run)->stale);
  CHECK(find_run(*db, run)->status_label() == "RUNNING");

  Statement old_beat(db->handle(), "UPDATE runs SET heartbeat = ?2 WHERE id = ?1");
  old_beat.bind_int64(1, run).bind_double(2, unix_now() - kStaleAfterSeconds - 5);
  old_beat.run();
  CHECK(find_run(*db, run)->stale);
  CHECK(find_run(*db, run)->status_label() == "RUNNING (stale)");

  recorder.heartbeat(run);
  CHECK_FALSE(find_run(*db, run)->stale);
  // A fresh heartbeat, but the controller process on this host is gone.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  Statement dead_pid(db->handle(), "UPDATE runs SET controller_pid = ?2 WHERE id = ?1");
  dead_pid.bind_int64(1, run).bind_int64(2, child);
  dead_pid.run();
  CHECK(find_run(*db, run)->stale);

  recorder.finish_run(run, RunStatus::Failed, "controller died");
  CHECK_FALSE(find_run(*db, run)->stale);  // only RUNNING runs can be stale
}

TEST_CASE("rewind_run drops the metrics from a step on and rebuilds the summary exactly",
          "[storage][recorder][resume]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("x", "x.lua", "h");
  const auto run = recorder.add_run(experiment, sample_config("none", 1));
  const auto other = recorder.add_run(experiment, sample_config("topk", 1));
  const double nan = std::nan("");
  const std::vector<double> values = {4, nan, 1, 3, 7, nan, 2};  // steps 0..6
  {
    auto sink = recorder.metrics_sink(run);
    auto other_sink = recorder.metrics_sink(other);
    for (std::size_t step = 0; step < values.size(); ++step) {
      sink->record({"train_loss", static_cast<std::int64_t>(step), 0, 0, 0, values[step]});
      other_sink->record({"train_loss", static_cast<std::int64_t>(step), 0, 0, 0, 1.0});
    }
    sink->record({"test_accuracy", 2, 0, 0, 0, 0.5});  // the end of epoch 0 (steps 0-2)
    sink->record({"test_accuracy", 6, 1, 0, 0, 0.75});
  }
  recorder.record_checkpoint(run, 4);
  recorder.rewind_run(run, 4);  // as it was before step 4 ran: steps 0..3 remain

  auto summary = summary_of(*db, run);
  REQUIRE(summary.count("train_loss") == 1);
  const Summary& loss = summary["train_loss"];
  CHECK(loss.last == 3);
  CHECK(loss.min == 1);
  CHECK(loss.max == 4);
  CHECK(loss.sum == 8);
  CHECK(loss.count == 3);
  CHECK(loss.nan_count == 1);
  CHECK(summary["test_accuracy"].last == 0.5);
  CHECK(summary["test_accuracy"].count == 1);
  CHECK(metrics_of(*db, run, "train_loss").size() == 4);
  CHECK(metrics_of(*db, other, "train_loss").size() == 7);  // other runs untouched
  CHECK(summary_of(*db, other)["train_loss"].count == 7);
  CHECK(find_run(*db, run)->checkpoint_step == 4);

  // Everything gone: no summary rows left.
  recorder.rewind_run(run, 0);
  CHECK(summary_of(*db, run).empty());
}
