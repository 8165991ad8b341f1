// Tags and notes on runs (storage/annotations.hpp) and the run_results view: what users write
// about runs, kept apart from the metrics, carried by merge, and one SELECT for a results table.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/core/error.hpp"
#include "storage/annotations.hpp"
#include "storage/merge.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::database_path;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

// A finished run of `compressor`: 2 workers x 3 steps sending `sent` of `dense` bytes each, and
// a final test accuracy.
std::int64_t record(Database& db, const std::string& compressor, double sent, double dense, double accuracy) {
  Recorder recorder(db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "exp.lua", "cafe");
  RunConfig config = sample_config(compressor, 1);
  if (compressor == "topk") {
    config.compressor.fields["ratio"] = 0.01;
    config.swept["compressor.ratio"] = 0.01;
    config.name = "compressor=topk,ratio=0.01,seed=1";
  }
  const auto run = recorder.add_run(experiment, config);
  recorder.start_run(run);
  {
    auto sink = recorder.metrics_sink(run);
    for (int step = 0; step < 3; ++step)
      for (int worker = 0; worker < 2; ++worker) {
        sink->record({"bytes_sent", step, 0, worker, 0, sent});
        sink->record({"bytes_dense", step, 0, worker, 0, dense});
      }
    sink->record({"test_accuracy", 2, 0, 0, 1, accuracy});
  }
  recorder.finish_run(run, RunStatus::Finished);
  return run;
}

}  // namespace

TEST_CASE("tags and notes are written once per run and never touch the metrics", "[storage][annotations]") {
  TempDir dir;
  const auto kind = GENERATE(std::string("memory"), std::string("file"));
  auto db = Database::open(database_path(kind, dir));
  const auto a = record(*db, "none", 1000, 1000, 0.85), b = record(*db, "topk", 20, 1000, 0.84);
  Statement rows(db->handle(), "SELECT count(*) FROM metric_values");
  rows.step();
  const std::int64_t metric_rows = rows.column_int64(0);

  add_tag(*db, {a, b}, "baseline");
  add_tag(*db, {b}, "baseline");  // again: still once
  add_tag(*db, {b}, "paper");
  set_note(*db, b, "ratio from the paper");
  CHECK(tags_of(*db, b) == std::vector<std::string>{"baseline", "paper"});
  CHECK(tags_in_use(*db) == std::vector<std::pair<std::string, std::int64_t>>{{"baseline", 2}, {"paper", 1}});
  CHECK(find_run(*db, b)->note == "ratio from the paper");
  CHECK(find_run(*db, b)->tags == std::vector<std::string>{"baseline", "paper"});
  CHECK(remove_tag(*db, {a, b}, "paper") == 1);
  set_note(*db, b, "");
  CHECK(find_run(*db, b)->note.empty());
  rows.reset();
  rows.step();
  CHECK(rows.column_int64(0) == metric_rows);

  CHECK_THROWS_AS(add_tag(*db, {a, 99}, "x"), ConfigError);
  CHECK(tags_of(*db, a) == std::vector<std::string>{"baseline"});  // nothing written
  CHECK_THROWS_WITH(add_tag(*db, {a}, "two words"), Catch::Contains("tag 'two words' must be a word"));
  CHECK_THROWS_WITH(add_tag(*db, {a}, ""), Catch::Contains("must be a word"));
}

TEST_CASE("run_results holds one row per run with its final metric, bytes and ratio", "[storage][annotations]") {
  TempDir dir;
  auto db = Database::open(dir.file("runs.db"));
  const auto a = record(*db, "none", 1000, 1000, 0.85), b = record(*db, "topk", 20, 1000, 0.84);
  add_tag(*db, {b}, "paper");
  add_tag(*db, {b}, "best");
  Statement q(db->handle(),
              "SELECT run_id, experiment, compressor, json_extract(swept, '$.\"compressor.ratio\"'), test_accuracy, "
              "bytes_sent, bytes_dense, compression_ratio, tags, wall_time >= 0 FROM run_results ORDER BY run_id");
  REQUIRE(q.step());
  CHECK(q.column_int64(0) == a);
  CHECK(q.column_text(1) == "fmnist-topk");
  CHECK(q.column_text(2) == "none");
  CHECK(q.column_is_null(3));
  CHECK(q.column_double(4) == Approx(0.85));
  CHECK(q.column_double(5) == 6000);
  CHECK(q.column_double(7) == 1);
  CHECK(q.column_is_null(8));
  CHECK(q.column_int64(9) == 1);
  REQUIRE(q.step());
  CHECK(q.column_text(2) == "topk");
  CHECK(q.column_double(3) == 0.01);
  CHECK(q.column_double(5) == 120);
  CHECK(q.column_double(6) == 6000);
  CHECK(q.column_double(7) == 50);
  CHECK(q.column_text(8) == "best,paper");
  CHECK_FALSE(q.step());
}

TEST_CASE("merge carries the runs' tags and notes", "[storage][annotations]") {
  TempDir dir;
  {
    auto shard = Database::open(dir.file("shard.db"));
    const auto run = record(*shard, "topk", 20, 1000, 0.84);
    add_tag(*shard, {run}, "paper");
    set_note(*shard, run, "from the shard");
  }
  auto target = Database::open(dir.file("all.db"));
  merge_database(*target, dir.file("shard.db"));
  const auto runs = list_runs(*target);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].tags == std::vector<std::string>{"paper"});
  CHECK(runs[0].note == "from the shard");
}
