// merge_database: the shards of a sweep gathered into one database, with every run's metrics,
// summary and facts under new ids; merging again adds nothing; runs that have not ended are
// left out and named; a run recorded in two shards is kept twice and named.
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine/core/error.hpp"
#include "storage/merge.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using laconic::storage::testing::scalar;
using namespace laconic::storage;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

// One ended run of `compressor` with `steps` steps of loss (value 1 / (step + 1) + offset) and,
// first in its database, a metric of its own name, so that metric ids differ between shards.
std::int64_t record_merge_run(Database& db, const std::string& compressor, std::int64_t seed, int steps, double offset,
                    const std::string& first_key, RunStatus status = RunStatus::Finished) {
  Recorder recorder(db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "exp.lua", "cafe");
  const auto run = recorder.add_run(experiment, sample_config(compressor, seed));
  recorder.start_run(run);
  {
    auto sink = recorder.metrics_sink(run);
    sink->record({first_key, 0, 0, 0, 0, 1.0});
    for (int step = 0; step < steps; ++step) sink->record({"loss", step, 0, 0, 0, 1.0 / (step + 1) + offset});
  }
  recorder.record_fact(run, "host_name", "shard-" + compressor);
  if (status != RunStatus::Running) recorder.finish_run(run, status);
  return run;
}

// (run name, key, step, value) of every metric row, in a stable order.
std::vector<std::string> metric_rows(Database& db) {
  Statement query(db.handle(),
                  "SELECT r.name || ' ' || m.key || ' ' || m.step || ' ' || m.value FROM metrics m "
                  "JOIN runs r ON r.id = m.run_id ORDER BY r.name, m.key, m.step");
  std::vector<std::string> out;
  while (query.step()) out.push_back(query.column_text(0));
  return out;
}

}  // namespace

TEST_CASE("two shards merge into one database with every run's metrics, summary and facts", "[storage][merge]") {
  TempDir dir;
  {
    auto a = Database::open(dir.file("a.db"));
    record_merge_run(*a, "none", 1, 3, 0.0, "only_in_a");
    auto b = Database::open(dir.file("b.db"));
    record_merge_run(*b, "topk", 1, 4, 0.5, "only_in_b");
    record_merge_run(*b, "topk", 2, 2, 0.25, "only_in_b");
  }
  auto out = Database::open(dir.file("out.db"));
  const auto first = merge_database(*out, dir.file("a.db"));
  CHECK(first.runs_added == 1);
  CHECK(first.experiments_added == 1);
  CHECK(first.metric_rows_added == 4);
  const auto second = merge_database(*out, dir.file("b.db"));
  CHECK(second.runs_added == 2);
  CHECK(second.experiments_added == 0);  // the same name and file hash
  CHECK(second.metric_rows_added == 5 + 3);
  CHECK(second.duplicates.empty());
  CHECK(second.conflicts.empty());
  CHECK(scalar(*out, "SELECT count(*) FROM experiments") == 1);
  CHECK(scalar(*out, "SELECT count(*) FROM runs WHERE status = 'FINISHED'") == 3);
  CHECK(scalar(*out, "SELECT count(*) FROM runs WHERE controller_pid IS NOT NULL") == 0);
  // Every value under its own name, whatever id the name had in its shard.
  std::vector<std::string> expected;
  {
    auto a = Database::open_read_only(dir.file("a.db"));
    auto b = Database::open_read_only(dir.file("b.db"));
    for (auto* db : {a.get(), b.get()})
      for (const auto& row : metric_rows(*db)) expected.push_back(row);
  }
  std::sort(expected.begin(), expected.end());
  auto merged = metric_rows(*out);
  std::sort(merged.begin(), merged.end());
  CHECK(merged == expected);
  CHECK(scalar(*out,
               "SELECT count FROM run_summary s JOIN runs r ON r.id = s.run_id "
               "WHERE r.name = 'compressor=topk,seed=1' AND s.key = 'loss'") == 4);
  CHECK(scalar(*out, "SELECT count(*) FROM run_facts WHERE key = 'host_name' AND value = 'shard-topk'") == 2);
}

TEST_CASE("merging the same database again adds nothing", "[storage][merge]") {
  TempDir dir;
  {
    auto a = Database::open(dir.file("a.db"));
    record_merge_run(*a, "none", 1, 3, 0.0, "x");
  }
  auto out = Database::open(dir.file("out.db"));
  merge_database(*out, dir.file("a.db"));
  const auto again = merge_database(*out, dir.file("a.db"));
  CHECK(again.runs_added == 0);
  CHECK(again.metric_rows_added == 0);
  REQUIRE(again.duplicates.size() == 1);
  CHECK_THAT(again.duplicates[0], Catch::Contains("'compressor=none,seed=1'") && Catch::Contains("is run 1 already"));
  CHECK(scalar(*out, "SELECT count(*) FROM runs") == 1);
  CHECK(scalar(*out, "SELECT count(*) FROM metric_values") == 4);
}

TEST_CASE("runs that have not ended are left out, and a run recorded in two shards is kept twice", "[storage][merge]") {
  TempDir dir;
  {
    auto a = Database::open(dir.file("a.db"));
    record_merge_run(*a, "none", 1, 3, 0.0, "x");
    record_merge_run(*a, "topk", 1, 2, 0.0, "x", RunStatus::Running);
    auto b = Database::open(dir.file("b.db"));
    record_merge_run(*b, "none", 1, 3, 0.125, "x", RunStatus::Failed);  // the same run, run apart
  }
  auto out = Database::open(dir.file("out.db"));
  const auto a = merge_database(*out, dir.file("a.db"));
  CHECK(a.runs_added == 1);
  REQUIRE(a.skipped.size() == 1);
  CHECK_THAT(a.skipped[0], Catch::Contains("'compressor=topk,seed=1'") && Catch::Contains("RUNNING"));
  const auto b = merge_database(*out, dir.file("b.db"));
  CHECK(b.runs_added == 1);
  REQUIRE(b.conflicts.size() == 1);
  CHECK_THAT(b.conflicts[0], Catch::Contains("(FAILED)") && Catch::Contains("both kept"));
  CHECK(scalar(*out, "SELECT count(*) FROM runs WHERE name = 'compressor=none,seed=1'") == 2);
}

TEST_CASE("merge refuses a missing source and the target itself", "[storage][merge]") {
  TempDir dir;
  auto out = Database::open(dir.file("out.db"));
  CHECK_THROWS_WITH(merge_database(*out, dir.file("missing.db")), Catch::Contains("no such database file"));
  CHECK_THROWS_WITH(merge_database(*out, dir.file("out.db")), Catch::Contains("into itself"));
}
