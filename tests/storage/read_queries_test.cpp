// The read side behind the CLI: --where conditions, the user's guarded SQL, streamed exports,
// the per-epoch table, and the errors that name what exists.
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "storage/export.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/run_facts.hpp"
#include "storage/run_where.hpp"
#include "storage/statement.hpp"
#include "storage/user_query.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using laconic::storage::testing::count_rows;
using namespace laconic::storage;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

RunConfig topk_config(double ratio, double lr, std::int64_t workers) {
  RunConfig config = sample_config("topk", 1);
  config.compressor.fields["ratio"] = ratio;
  config.optimizer.fields["lr"] = lr;
  config.workers = workers;
  config.swept = {{"compressor", std::string("topk")}, {"compressor.ratio", ratio}, {"seed", std::int64_t{1}}};
  config.name = "compressor=topk,ratio=" + std::to_string(ratio) + ",seed=1";
  return config;
}

std::vector<std::int64_t> ids_where(const std::vector<RunRow>& runs, const std::vector<std::string>& where) {
  std::vector<WhereCondition> conditions;
  for (const auto& w : where) conditions.push_back(parse_where(w));
  std::vector<std::int64_t> ids;
  for (const auto& run : filter_where(runs, conditions)) ids.push_back(run.id);
  return ids;
}

}  // namespace

TEST_CASE("--where matches swept variables and config fields, numbers numerically", "[storage][where]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("e", "e.lua", "h");
  const auto none = recorder.add_run(e, sample_config("none", 1));  // workers 2, lr 0.05
  const auto topk1 = recorder.add_run(e, topk_config(0.01, 0.1, 4));
  const auto topk10 = recorder.add_run(e, topk_config(0.1, 0.1, 2));
  const auto runs = list_runs(*db);

  CHECK(ids_where(runs, {"compressor=topk"}) == std::vector<std::int64_t>{topk1, topk10});
  CHECK(ids_where(runs, {"compressor=none"}) == std::vector<std::int64_t>{none});
  CHECK(ids_where(runs, {"ratio=0.01"}) == std::vector<std::int64_t>{topk1});  // swept compressor.ratio
  CHECK(ids_where(runs, {"ratio=1e-2"}) == std::vector<std::int64_t>{topk1});
  CHECK(ids_where(runs, {"compressor.ratio = 0.100"}) == std::vector<std::int64_t>{topk10});
  CHECK(ids_where(runs, {"workers=4"}) == std::vector<std::int64_t>{topk1});  // config only
  CHECK(ids_where(runs, {"workers=4.0"}) == std::vector<std::int64_t>{topk1});
  CHECK(ids_where(runs, {"lr=0.1"}) == std::vector<std::int64_t>{topk1, topk10});  // config optimizer.lr
  CHECK(ids_where(runs, {"optimizer.lr=0.05"}) == std::vector<std::int64_t>{none});
  CHECK(ids_where(runs, {"compressor=topk", "workers=2"}) == std::vector<std::int64_t>{topk10});  // AND
  CHECK(ids_where(runs, {"compressor=topk", "workers=3"}).empty());
  CHECK(ids_where(runs, {"model=lenet5"}).size() == 3);  // a component compares its name
  CHECK(ids_where(runs, {"workers=four"}).empty());      // text never equals a number

  CHECK_THROWS_WITH(ids_where(runs, {"compresor=topk"}),
                    Catch::Contains("no run has a swept variable or config field 'compresor'") &&
                        Catch::Contains("swept variables: compressor, compressor.ratio, seed"));
  CHECK_THROWS_AS(parse_where("compressor"), ConfigError);
  CHECK_THROWS_AS(parse_where("=topk"), ConfigError);
  CHECK_THROWS_AS(parse_where("ratio="), ConfigError);
  // Text with SQL in it is just a value that matches nothing.
  CHECK(ids_where(runs, {"compressor=topk' OR 1=1 --"}).empty());
}

TEST_CASE("--where compares numbers with != < <= > >=, and falls back on final metrics", "[storage][where]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("e", "e.lua", "h");
  const auto none = recorder.add_run(e, sample_config("none", 1));
  const auto topk1 = recorder.add_run(e, topk_config(0.01, 0.1, 4));
  const auto topk10 = recorder.add_run(e, topk_config(0.1, 0.1, 2));
  const auto runs = list_runs(*db);
  using Ids = std::vector<std::int64_t>;
  CHECK(ids_where(runs, {"ratio<0.05"}) == Ids{topk1});
  CHECK(ids_where(runs, {"ratio<=0.1"}) == Ids{topk1, topk10});
  CHECK(ids_where(runs, {"ratio <= 1e-1"}) == Ids{topk1, topk10});
  CHECK(ids_where(runs, {"workers>2"}) == Ids{topk1});
  CHECK(ids_where(runs, {"workers>=2"}) == Ids{none, topk1, topk10});
  CHECK(ids_where(runs, {"compressor!=topk"}) == Ids{none});
  CHECK(ids_where(runs, {"compressor>3"}).empty());  // a name is not a number
  CHECK_THROWS_WITH(parse_where("ratio<small"), Catch::Contains("< compares numbers, and 'small' is not one"));
  CHECK_THROWS_AS(parse_where("ratio!0.1"), ConfigError);
  CHECK(parse_where("test_accuracy >= 0.85").text() == "test_accuracy>=0.85");

  // Keys that are neither swept nor configured are the runs' final metrics.
  const std::map<std::int64_t, double> accuracy{{none, 0.86}, {topk1, 0.80}, {topk10, std::nan("")}};
  CHECK(ids_where(runs, {"workers<=1e308"}).size() == 3);
  const FinalMetric final_metric = [&](const std::string& key, std::int64_t run) -> std::optional<double> {
    if (key != "test_accuracy") return std::nullopt;
    return accuracy.at(run);
  };
  auto where = [&](const std::string& text) {
    Ids ids;
    for (const auto& run : filter_where(runs, {parse_where(text)}, final_metric)) ids.push_back(run.id);
    return ids;
  };
  CHECK(where("test_accuracy>0.85") == Ids{none});
  CHECK(where("test_accuracy<0.9") == Ids{none, topk1});  // NaN (a diverged run) satisfies nothing
  CHECK(where("workers=4") == Ids{topk1});                // the config still comes first
  const FinalMetric infinite = [&](const std::string&, std::int64_t) -> std::optional<double> {
    return std::numeric_limits<double>::infinity();
  };
  CHECK(filter_where(runs, {parse_where("test_loss<=0.55")}, infinite).empty());  // inf is no near miss
  CHECK_THROWS_WITH(where("test_acc>0.5"), Catch::Contains("no run has a swept variable, config field or metric "
                                                           "'test_acc'"));
}

TEST_CASE("the user's query reads and refuses anything that writes", "[storage][user_query]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  {
    auto db = Database::open(path);
    Recorder recorder(*db);
    const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
    auto sink = recorder.metrics_sink(run);
    sink->record({"train_loss", 0, 0, 0, 0.0, std::nan("")});
    sink->record({"train_loss", 1, 0, 0, 0.0, 1.5});
  }
  auto db = Database::open_read_only(path);
  {
    UserQuery query(*db, "SELECT step, value, key, NULL AS missing FROM metrics ORDER BY step;  -- trailing comment");
    CHECK(query.columns() == std::vector<std::string>{"step", "value", "key", "missing"});
    std::vector<Cell> row;
    REQUIRE(query.next(row));
    CHECK(row[0].type == Cell::Type::Integer);
    CHECK(row[1].type == Cell::Type::Null);  // the stored NaN
    CHECK(row[2].text == "train_loss");
    REQUIRE(query.next(row));
    CHECK(row[1].type == Cell::Type::Real);
    CHECK(row[1].real == 1.5);
    CHECK_FALSE(query.next(row));
  }
  CHECK_NOTHROW(UserQuery(*db, "PRAGMA table_info(runs)"));
  CHECK_NOTHROW(UserQuery(*db, "SELECT json_extract(swept, '$.compressor') FROM runs"));
  CHECK_NOTHROW(UserQuery(*db,
                          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) "
                          "SELECT i FROM n"));

  const std::vector<std::pair<std::string, std::string>> refused{
      {"INSERT INTO experiments (name, file_path, file_hash, created) VALUES ('x', 'x', 'x', 0)",
       "INSERT into experiments"},
      {"DELETE FROM metric_values", "DELETE from metric_values"},
      {"DELETE FROM metrics", "only reads: writing to the view metrics is refused"},  // SQLite refuses before asking
      {"INSERT INTO metrics (run_id, key, step, epoch, worker) VALUES (1, 'x', 0, 0, 0)", "INSERT into"},
      {"UPDATE runs SET status = 'FAILED'", "UPDATE of runs"},
      {"DROP TABLE metrics", "DROP TABLE metrics"},
      {"CREATE TABLE t (x)", "CREATE TABLE t"},
      {"ATTACH DATABASE ':memory:' AS other", "ATTACH"},
      {"PRAGMA query_only = 0", "PRAGMA query_only = 0"},
      {"PRAGMA user_version = 7", "PRAGMA user_version = 7"},
      {"PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = DELETE"},
      {"BEGIN", "BEGIN"},
      {"SELECT 1; DELETE FROM metrics", "one statement"},
      {"SELECT 1; SELECT 2", "one statement"},
      {"", "empty"},
      {"SELEC 1", "syntax error"},
  };
  for (const auto& [sql, message] : refused) {
    INFO(sql);
    CHECK_THROWS_MATCHES(
        UserQuery(*db, sql), ConfigError,
        Catch::Matchers::Predicate<ConfigError>(
            [&](const ConfigError& e) { return std::string(e.what()).find(message) != std::string::npos; },
            "message contains '" + message + "'"));
  }
  CHECK(count_rows(*db, "metrics") == 2);
  CHECK(count_rows(*db, "experiments") == 1);

  // Even on a read-write connection the guard holds.
  auto writable = Database::open(path);
  CHECK_THROWS_AS(UserQuery(*writable, "DELETE FROM metrics"), ConfigError);
  CHECK(count_rows(*writable, "metrics") == 2);
}

TEST_CASE("exports stream filtered rows with NaN as NaN", "[storage][export]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto a = recorder.add_experiment("a", "a.lua", "h1");
  const auto b = recorder.add_experiment("b", "b.lua", "h2");
  const auto r1 = recorder.add_run(a, sample_config("topk", 1));
  const auto r2 = recorder.add_run(a, sample_config("none", 1));
  const auto r3 = recorder.add_run(b, sample_config("qsgd", 1));
  for (auto run : {r1, r2, r3}) {
    auto sink = recorder.metrics_sink(run);
    for (int step = 0; step < 3; ++step) {
      sink->record({"train_loss", step, 0, 0, 0.1 * step, step == 2 && run == r2 ? std::nan("") : 1.0 + step});
      sink->record({keys::kBytesSent, step, 0, 0, 0.1 * step, 100.0});
    }
  }
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  RowSink sink{[&](const std::vector<std::string>& c) { columns = c; },
               [&](const std::vector<Cell>& r) { rows.push_back(r); }};

  CHECK(export_metrics(*db, {}, sink) == 18);
  CHECK(columns == std::vector<std::string>{"run_id", "experiment", "run", "key", "step", "epoch", "worker",
                                            "wall_time", "value"});
  // Ordered by run, key name (bytes_sent before train_loss, though train_loss got the lower
  // metric_keys id), step.
  std::string order;
  for (const auto& row : rows)
    order += std::to_string(row[0].integer) + row[3].text.substr(0, 1) + std::to_string(row[4].integer) + " ";
  CHECK(order == "1b0 1b1 1b2 1t0 1t1 1t2 2b0 2b1 2b2 2t0 2t1 2t2 3b0 3b1 3b2 3t0 3t1 3t2 ");
  rows.clear();
  CHECK(export_metrics(*db, {.experiment = "a", .runs = {}, .keys = {"train_loss"}}, sink) == 6);
  CHECK(rows[0][0].integer == r1);
  CHECK(rows[3][0].integer == r2);
  CHECK(rows[5][8].type == Cell::Type::Real);
  CHECK(std::isnan(rows[5][8].real));  // NULL read back as NaN
  CHECK(rows[4][8].real == 2.0);
  rows.clear();
  CHECK(export_metrics(*db, {.experiment = std::nullopt, .runs = {r3}, .keys = {}}, sink) == 6);
  CHECK(rows[0][1].text == "b");

  rows.clear();
  CHECK(export_summary(*db, {.experiment = std::nullopt, .runs = {r2}, .keys = {}}, sink) == 2);
  CHECK(columns[7] == "mean");
  CHECK(rows[0][3].text == keys::kBytesSent);
  CHECK(rows[0][8].real == 300.0);  // sum
  CHECK(rows[1][3].text == "train_loss");
  CHECK(std::isnan(rows[1][4].real));  // last was NaN
  CHECK(rows[1][7].real == 1.5);       // mean of 1 and 2
  CHECK(rows[1][10].integer == 1);     // nan_count
  // A "filter" value with SQL in it is a bound parameter: it matches nothing and breaks nothing.
  CHECK(export_metrics(*db, {.experiment = "a' OR '1'='1", .runs = {}, .keys = {}}, sink) == 0);
}

TEST_CASE("the per-epoch table aggregates each key the way its meaning asks", "[storage][queries]") {
  auto db = Database::open(":memory:");
  Recorder recorder(*db);
  const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  {
    auto sink = recorder.metrics_sink(run);
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (int worker = 0; worker < 2; ++worker) {
        for (int s = 0; s < 3; ++s) {
          sink->record({keys::kBytesSent, epoch * 3 + s, epoch, worker, 0, 10.0});
          sink->record({"bytes_dense", epoch * 3 + s, epoch, worker, 0, 1000.0});
        }
        sink->record({"epoch_train_loss", epoch * 3 + 2, epoch, worker, 0, 1.0 + worker + epoch});
        sink->record({"epoch_time", epoch * 3 + 2, epoch, worker, 0, 5.0 + worker});
      }
      sink->record({"test_accuracy", epoch * 3 + 2, epoch, 0, 0, 0.5 + 0.25 * epoch});
      sink->record({"test_loss", epoch * 3 + 2, epoch, 0, 0, epoch == 1 ? std::nan("") : 0.7});
    }
    sink->record({keys::kBytesSent, 0, -1, 2, 0, 1e6});  // a server's row: not an epoch
  }
  const auto epochs = epochs_of(*db, run);
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[0].epoch == 0);
  CHECK(epochs[0].test_accuracy == 0.5);
  CHECK(epochs[1].test_accuracy == 0.75);
  CHECK(epochs[0].test_loss == 0.7);
  CHECK(std::isnan(epochs[1].test_loss));
  CHECK(std::isnan(epochs[0].test_perplexity));
  CHECK(epochs[0].epoch_train_loss == 1.5);  // mean of workers 1.0 and 2.0
  CHECK(epochs[1].epoch_train_loss == 2.5);
  CHECK(epochs[0].epoch_time == 6.0);  // the slowest worker
  CHECK(epochs[0].bytes_sent == 60.0);
  CHECK(epochs[1].bytes_dense == 6000.0);
}

TEST_CASE("an unknown run id names the ids that exist; metric keys are listed", "[storage][queries]") {
  auto db = Database::open(":memory:");
  CHECK_THROWS_WITH(require_run(*db, 1), Catch::Contains("holds no runs yet"));
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("e", "e.lua", "h");
  const auto other = recorder.add_experiment("f", "f.lua", "h");
  const auto first = recorder.add_run(e, sample_config("topk", 1));
  const auto last = recorder.add_run(other, sample_config("none", 1));
  CHECK(run_id_range(*db).count == 2);
  CHECK_THROWS_WITH(require_run(*db, 99),
                    Catch::Contains("no run 99") &&
                        Catch::Contains("2 runs with ids " + std::to_string(first) + " to " + std::to_string(last)));
  CHECK(require_run(*db, first).name == "compressor=topk,seed=1");
  {
    auto sink = recorder.metrics_sink(first);
    sink->record({"test_accuracy", 0, 0, 0, 0, 0.5});
    sink->record({keys::kBytesSent, 0, 0, 0, 0, 5});
  }
  {
    auto sink = recorder.metrics_sink(last);
    sink->record({"test_perplexity", 0, 0, 0, 0, 40});
  }
  CHECK(metric_keys(*db) == std::vector<std::string>{keys::kBytesSent, "test_accuracy", "test_perplexity"});
  CHECK(metric_keys(*db, std::string("f")) == std::vector<std::string>{"test_perplexity"});
  CHECK(summaries_of_key(*db, "test_accuracy").at(first).last == 0.5);
  CHECK(list_runs(*db)[1].final_test_perplexity == 40);
}

TEST_CASE("where a run trained reads as the report and the UI say it", "[storage][facts]") {
  storage::RunFacts facts;
  CHECK(facts.trained_on() == "cpu");  // a run recorded before the resolved fact
  facts.resolved = ResolvedRun{};
  CHECK(facts.trained_on() == "cpu");
  facts.resolved->device = "cuda:0";  // codecs on the CPU, the gradient staged
  CHECK(facts.trained_on() == "cuda:0 (codecs on the cpu)");
  facts.resolved->codecs_on = "cuda:0";
  CHECK(facts.trained_on() == "cuda:0");
}
