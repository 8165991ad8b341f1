#include <cmath>
#include <string>

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::database_path;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

TEST_CASE("list_runs reports final test accuracy and total bytes per run", "[storage][queries]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto fmnist = recorder.add_experiment("fmnist-topk", "fmnist.lua", "h1");
  const auto other = recorder.add_experiment("cifar", "cifar.lua", "h2");
  const auto topk = recorder.add_run(fmnist, sample_config("topk", 1));
  const auto none = recorder.add_run(fmnist, sample_config("none", 1));
  const auto cifar = recorder.add_run(other, sample_config("qsgd", 1));
  for (auto run : {topk, none, cifar}) recorder.start_run(run);
  {
    auto sink = recorder.metrics_sink(topk);
    for (int step = 0; step < 4; ++step)
      for (int worker = 0; worker < 2; ++worker) {
        sink->record({keys::kBytesSent, step, step / 2, worker, 0, 100});
        sink->record({"bytes_dense", step, step / 2, worker, 0, 10000});
      }
    sink->record({"test_accuracy", 1, 0, 0, 0, 0.61});
    sink->record({"test_accuracy", 3, 1, 0, 0, 0.78});
  }
  recorder.finish_run(topk, RunStatus::Finished);
  recorder.finish_run(none, RunStatus::Diverged);

  const auto all = list_runs(*db);
  REQUIRE(all.size() == 3);
  CHECK(all[0].id == topk);
  CHECK(all[0].experiment == "fmnist-topk");
  CHECK(all[0].final_test_accuracy == 0.78);
  CHECK(all[0].bytes_sent == 800);
  CHECK(all[0].bytes_dense == 80000);
  CHECK(std::isnan(all[1].final_test_accuracy));
  CHECK(all[1].bytes_sent == 0);
  CHECK(all[2].status == storage::RunStatus::Running);
  CHECK(all[2].wall_time >= 0);

  const auto fmnist_runs =
      list_runs(*db, {.experiment = "fmnist-topk", .status = std::nullopt, .newest = std::nullopt});
  REQUIRE(fmnist_runs.size() == 2);
  CHECK(fmnist_runs[1].id == none);
  const auto diverged = list_runs(*db, {.experiment = std::nullopt, .status = "DIVERGED", .newest = std::nullopt});
  REQUIRE(diverged.size() == 1);
  CHECK(diverged[0].id == none);
  CHECK(list_runs(*db, {.experiment = "nope", .status = std::nullopt, .newest = std::nullopt}).empty());
  CHECK_THROWS_AS(list_runs(*db, {.experiment = std::nullopt, .status = "DONE", .newest = std::nullopt}), ConfigError);
}

TEST_CASE("a read-only connection sees committed rows and refuses to write", "[storage][queries][wal]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  auto writer = Database::open(path);
  Recorder recorder(*writer);
  const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  recorder.start_run(run);
  auto sink = recorder.metrics_sink(run);
  sink->record({"test_accuracy", 0, 0, 0, 1.0, 0.5});
  sink->flush();
  sink->record({"test_accuracy", 1, 1, 0, 2.0, 0.9});  // buffered, not committed yet

  auto reader = Database::open_read_only(path);
  CHECK(reader->read_only());
  CHECK(reader->schema_version() == writer->schema_version());
  auto rows = list_runs(*reader);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].status == storage::RunStatus::Running);
  CHECK(rows[0].final_test_accuracy == 0.5);
  CHECK(metrics_of(*reader, run, "test_accuracy").size() == 1);

  sink->flush();
  CHECK(list_runs(*reader)[0].final_test_accuracy == 0.9);
  CHECK(metrics_of(*reader, run, "test_accuracy").size() == 2);

  try {
    exec(reader->handle(), "INSERT INTO experiments (name, file_path, file_hash, created) VALUES ('x', 'x', 'x', 0)");
    FAIL("a read-only connection accepted an INSERT");
  } catch (const StorageError& e) {
    CHECK(e.code() == SQLITE_READONLY);
  }
  CHECK_THROWS_WITH(Recorder(*reader), Catch::Contains("read-only"));
}
