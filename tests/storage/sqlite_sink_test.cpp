#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"
#include "engine/core/metric_keys.hpp"

using namespace laconic;
using laconic::storage::testing::count_rows;
using namespace laconic::storage;
using laconic::storage::testing::database_path;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

std::int64_t new_run(Recorder& recorder) {
  return recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
}

}  // namespace

TEST_CASE("metrics with NaN and inf survive a round trip", "[storage][sink]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto run = new_run(recorder);
  {
    auto sink = recorder.metrics_sink(run);
    sink->record({"train_loss", 0, 0, 0, 0.5, 2.25});
    sink->record({"train_loss", 1, 0, 0, 1.0, kNaN});
    sink->record({"train_loss", 2, 0, 0, 1.5, kInf});
    sink->record({"train_loss", 3, 0, 0, 2.0, -kInf});
    sink->record({"train_loss", 1, 0, 1, 1.1, 1.75});
  }  // the destructor commits

  Statement raw(db->handle(), "SELECT value IS NULL FROM metrics WHERE step = 1 AND worker = 0");
  REQUIRE(raw.step());
  CHECK(raw.column_int64(0) == 1);  // NaN is stored as NULL

  const auto records = metrics_of(*db, run, "train_loss");
  REQUIRE(records.size() == 5);
  CHECK(records[0].value == 2.25);
  CHECK(records[0].wall_time == 0.5);
  CHECK(records[1].step == 1);  // ordered by epoch, step, worker
  CHECK(records[1].worker == 0);
  CHECK(std::isnan(records[1].value));
  CHECK(records[2].worker == 1);
  CHECK(records[2].value == 1.75);
  CHECK(records[3].value == kInf);
  CHECK(records[4].value == -kInf);
  CHECK(records[4].key == "train_loss");
}

TEST_CASE("run_summary matches a plain computation over the recorded values", "[storage][sink][summary]") {
  TempDir dir;
  auto db = Database::open(database_path(GENERATE(as<std::string>{}, "memory", "file"), dir));
  Recorder recorder(*db);
  const auto run = new_run(recorder);

  // Enough rows for several automatic batches plus a partial one, with NaNs sprinkled in.
  std::mt19937 random(7);
  std::normal_distribution<double> normal(1.0, 2.0);
  std::vector<double> values;
  for (int i = 0; i < 5000; ++i) values.push_back(i % 97 == 5 ? kNaN : normal(random));
  values.back() = -3.5;

  auto sink = recorder.metrics_sink(run);
  for (std::size_t i = 0; i < values.size(); ++i) {
    sink->record({"train_loss", static_cast<std::int64_t>(i / 2), 0, static_cast<int>(i % 2), 0.0, values[i]});
    sink->record({keys::kBytesSent, static_cast<std::int64_t>(i / 2), 0, static_cast<int>(i % 2), 0.0, 1000.0});
  }
  sink->flush();

  double min = kInf, max = -kInf, sum = 0;
  std::int64_t count = 0, nans = 0;
  for (double v : values) {
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    ++count;
  }
  const auto summary = summary_of(*db, run);
  REQUIRE(summary.count("train_loss") == 1);
  const Summary& loss = summary.at("train_loss");
  CHECK(loss.last == -3.5);
  CHECK(loss.min == min);
  CHECK(loss.max == max);
  CHECK(loss.sum == Approx(sum).epsilon(1e-12));
  CHECK(loss.count == count);
  CHECK(loss.nan_count == nans);
  CHECK(summary.at(keys::kBytesSent).sum == 5000.0 * 1000.0);
  CHECK(summary.at(keys::kBytesSent).count == 5000);
  CHECK(count_rows(*db, "metrics") == 10000);
}

TEST_CASE("a key whose last value is NaN has last NaN and keeps min and max of the rest", "[storage][summary]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto run = new_run(recorder);
  auto sink = recorder.metrics_sink(run);
  sink->record({"train_loss", 0, 0, 0, 0, 4.0});
  sink->flush();  // a second batch must merge with the first
  sink->record({"train_loss", 1, 0, 0, 0, kInf});
  sink->record({"train_loss", 2, 0, 0, 0, kNaN});
  sink->flush();
  const Summary s = summary_of(*db, run).at("train_loss");
  CHECK(std::isnan(s.last));
  CHECK(s.min == 4.0);
  CHECK(s.max == kInf);
  CHECK(s.sum == kInf);
  CHECK(s.count == 2);
  CHECK(s.nan_count == 1);
}

TEST_CASE("the sink commits every batch of rows by itself and the rest on flush", "[storage][sink]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto run = new_run(recorder);
  SqliteSink sink(*db, run, 3);
  for (int i = 0; i < 7; ++i) sink.record({"time_step", i, 0, 0, 0, 0.01});
  CHECK(count_rows(*db, "metrics") == 6);
  CHECK(sink.pending() == 1);
  sink.flush();
  CHECK(count_rows(*db, "metrics") == 7);
  CHECK(summary_of(*db, run).at("time_step").count == 7);
}

TEST_CASE("sinks share metric_keys ids, and a rolled-back batch forgets the ids it added", "[storage][sink][keys]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto first = new_run(recorder);
  const auto second = new_run(recorder);
  SqliteSink a(*db, first);
  SqliteSink b(*db, second);
  a.record({"train_loss", 0, 0, 0, 0, 1.0});
  a.flush();
  b.record({"train_loss", 0, 0, 0, 0, 2.0});
  b.flush();
  CHECK(count_rows(*db, "metric_keys") == 1);  // one id for the name, whichever sink added it

  // A batch that fails after adding its new key rolls that key back. Its id must not be reused
  // for the key when the batch is retried: another sink may have taken it for another name.
  exec(db->handle(),
       "CREATE TEMP TRIGGER refuse AFTER INSERT ON metric_values WHEN NEW.value = 13 "
       "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
  a.record({keys::kBytesSent, 1, 0, 0, 0, 13.0});
  CHECK_THROWS_AS(a.flush(), StorageError);
  CHECK(a.pending() == 1);
  CHECK(count_rows(*db, "metric_keys") == 1);
  b.record({"time_step", 1, 0, 0, 0, 0.5});  // takes the id bytes_sent had in the rolled-back batch
  b.flush();
  exec(db->handle(), "DROP TRIGGER refuse");
  a.flush();
  Statement rows(db->handle(), "SELECT run_id || ':' || key || '=' || value FROM metrics WHERE step = 1 ORDER BY seq");
  REQUIRE(rows.step());
  CHECK(rows.column_text(0) == std::to_string(second) + ":time_step=0.5");
  REQUIRE(rows.step());
  CHECK(rows.column_text(0) == std::to_string(first) + ":bytes_sent=13.0");
  CHECK_FALSE(rows.step());
  CHECK(count_rows(*db, "metric_keys") == 3);
  CHECK(summary_of(*db, first).at(keys::kBytesSent).sum == 13.0);
}
