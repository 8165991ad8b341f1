// The JSON `laconic ui` serves (ui/api.hpp), against what the database holds: a series' points,
// what is new after a step, a zoom, the bytes sent so far, the runs changed since a time, and an
// experiment's targets as the user sets them. No server: each function on a read-only connection.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <tuple>
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/resolved_run.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/run_status.hpp"
#include "tests/storage/storage_test_support.hpp"
#include "ui/api.hpp"

using namespace laconic;

namespace {

using storage::testing::TempDir;

RunConfig config(const std::string& compressor, std::int64_t seed) {
  RunConfig c = storage::testing::sample_config(compressor, seed);
  c.experiment = "sweep";
  c.workers = 1;
  return c;
}

// Ten steps of one worker: train_loss = step, bytes_sent = 100 x (step + 1),
// projected_time_step = 0.25 x (step + 1); test accuracy
// `accuracy` - 0.1 at step 4 and `accuracy` at step 9.
void record(storage::Recorder& recorder, std::int64_t run, double accuracy) {
  recorder.start_run(run);
  auto sink = recorder.metrics_sink(run);
  for (int step = 0; step < 10; ++step) {
    const int epoch = step / 5;
    const double wall = 0.1 * step;
    sink->record({keys::kTrainLoss, step, epoch, 0, wall, static_cast<double>(step)});
    sink->record({keys::kBytesSent, step, epoch, 0, wall, 100.0 * (step + 1)});
    sink->record({keys::kBytesDense, step, epoch, 0, wall, 1000.0});
    sink->record({keys::kTimeStep, step, epoch, 0, wall, 0.01});
    sink->record({keys::kProjectedTimeStep, step, epoch, 0, wall, 0.25 * (step + 1)});
    if (step % 5 == 4) sink->record({keys::kTestAccuracy, step, epoch, 0, wall, accuracy - (step == 4 ? 0.1 : 0)});
  }
  sink->flush();
  recorder.finish_run(run, storage::RunStatus::Finished);
}

}  // namespace

TEST_CASE("a series comes back as recorded: new points, a zoom, the bytes sent and time projected so far",
          "[ui][api]") {
  TempDir tmp;
  {
    auto db = storage::Database::open(tmp.file("runs.db"));
    storage::Recorder recorder(*db);
    record(recorder, recorder.add_run(recorder.add_experiment("sweep", "sweep.lua", "h"), config("none", 1)), 0.9);
  }
  auto db = storage::Database::open_read_only(tmp.file("runs.db"), false);
  ui::SeriesQuery q;
  q.key = keys::kTrainLoss;
  auto all = ui::series_json(*db, 1, q);
  CHECK(all["total"] == 10);
  CHECK(all["last_step"] == 9);
  CHECK(all["downsampled"] == false);
  CHECK(all["value"][3] == 3.0);
  CHECK_FALSE(all.contains("bytes"));

  q.after_step = 6;
  const auto after = ui::series_json(*db, 1, q);
  CHECK(after["step"] == nlohmann::json({7, 8, 9}));

  q.after_step.reset();
  q.from = 2;
  q.to = 4;
  q.bytes = true;
  const auto zoom = ui::series_json(*db, 1, q);
  CHECK(zoom["step"] == nlohmann::json({2, 3, 4}));
  // Summed from the first step, not from the zoom's: 100 + 200 + 300 by step 2.
  CHECK(zoom["bytes"] == nlohmann::json({600.0, 1000.0, 1500.0}));
  CHECK_FALSE(zoom.contains("projected"));
  // The steps' projected seconds, summed from the first step the same way: 0.25 + 0.5 + 0.75.
  q.bytes = false;
  q.projected = true;
  const auto projected = ui::series_json(*db, 1, q);
  CHECK(projected["projected"] == nlohmann::json({1.5, 2.5, 3.75}));
  CHECK_FALSE(projected.contains("bytes"));

  q = {};
  q.key = "no_such_metric";
  CHECK(ui::series_json(*db, 1, q)["total"] == 0);
}

TEST_CASE("the newest runs, what the runs page draws first, are the highest ids, in order, with the total",
          "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  for (int seed = 1; seed <= 5; ++seed) recorder.add_run(e, config("none", seed));
  const auto newest = ui::newest_runs_json(*db, 3);
  CHECK(newest["total"] == 5);
  REQUIRE(newest["runs"].size() == 3);
  CHECK(newest["runs"][0]["id"] == 3);
  CHECK(newest["runs"][2]["id"] == 5);
  CHECK(newest["runs"][2] == ui::runs_json(*db)["runs"][4]);  // the same object as the whole list's
  CHECK(ui::newest_runs_json(*db, 10)["runs"].size() == 5);
}

TEST_CASE("the runs changed since a time are the ones a page that has the rest asks for", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  record(recorder, recorder.add_run(e, config("none", 1)), 0.9);
  const auto first = ui::runs_json(*db);
  REQUIRE(first["runs"].size() == 1);
  CHECK(first["runs"][0]["status"] == "FINISHED");
  CHECK(first["runs"][0]["swept"]["compressor"] == "none");
  const double ended = first["runs"][0]["ended"];
  CHECK(ui::runs_json(*db, ended + 0.01)["runs"].empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  recorder.add_run(e, config("topk", 1));
  const auto later = ui::runs_json(*db, ended + 0.01);
  REQUIRE(later["runs"].size() == 1);
  CHECK(later["runs"][0]["status"] == "QUEUED");
  CHECK_THROWS_AS(ui::run_json(*db, 99), ConfigError);
  CHECK(ui::run_json(*db, 1)["steps_per_epoch"] == 5);
  // What GET /api/runs serves, written run by run, is the same runs as the JSON built whole.
  auto text = nlohmann::json::parse(ui::runs_json_text(*db));
  auto whole = ui::runs_json(*db);
  REQUIRE(text["runs"].size() == 2);
  CHECK(text["runs"] == whole["runs"]);
  CHECK(text["now"].is_number());
}

TEST_CASE("an experiment's target is the report's unless the user sets one", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  record(recorder, recorder.add_run(e, config("none", 1)), 0.9);
  record(recorder, recorder.add_run(e, config("topk", 1)), 0.8);
  const auto report = ui::experiment_json(*db, "sweep");
  REQUIRE(report["configurations"].size() == 2);
  // The default: the baseline's (none's) 0.9 less half a point.
  CHECK(report["configurations"][0]["target"].get<double>() == Approx(0.895));
  CHECK(report["target"].is_null());
  const auto set = ui::experiment_json(*db, "sweep", 0.75);
  CHECK(set["target"] == 0.75);
  for (const auto& c : set["configurations"]) CHECK(c["target"].get<double>() == Approx(0.75));
  CHECK_THROWS_AS(ui::experiment_json(*db, "nothing"), ConfigError);
}

TEST_CASE("runs that name a hardware profile the page cannot read say so, and the rest is drawn as without one",
          "[ui][api][hardware]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  for (const char* compressor : {"none", "topk"}) {
    RunConfig c = config(compressor, 1);
    c.hardware = {"hardware", "profile", {{"file", tmp.file("gone.json")}}};
    record(recorder, recorder.add_run(e, c), 0.9);
  }
  const auto model = ui::experiment_json(*db, "sweep");
  CHECK_THAT(model["hardware"]["error"].get<std::string>(), Catch::Contains("gone.json"));
  REQUIRE(model["configurations"].size() == 2);
  for (const auto& c : model["configurations"]) {
    CHECK(c.contains("scan"));
    CHECK_FALSE(c.contains("scan_there"));
  }
  for (const auto& s : model["sections"]) CHECK(s["anchor"] != "hardware");

  RunConfig measured = config("none", 2);
  const auto other = recorder.add_experiment("plain", "plain.lua", "p");
  measured.experiment = "plain";
  record(recorder, recorder.add_run(other, measured), 0.9);
  CHECK(ui::experiment_json(*db, "plain")["hardware"].is_null());
}

TEST_CASE("a configuration is the run less its seed, decided once for the CLI and the pages", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  for (const auto& [compressor, seed] : {std::pair{"none", 1}, {"none", 2}, {"topk", 1}})
    recorder.add_run(e, config(compressor, seed));
  const auto rows = storage::list_runs(*db);
  const auto served = ui::runs_json(*db)["runs"];
  REQUIRE(served.size() == 3);
  std::map<std::int64_t, nlohmann::json> by_id;
  for (const auto& run : served) by_id[run["id"].get<std::int64_t>()] = run;
  for (const auto& row : rows) {
    CHECK(by_id[row.id]["configuration"] == storage::configuration_key(row));
    CHECK(by_id[row.id]["configuration_label"] == storage::configuration_label(row));
  }
  CHECK(storage::configuration_key(rows[0]) == storage::configuration_key(rows[1]));  // two seeds
  CHECK(storage::configuration_key(rows[0]) != storage::configuration_key(rows[2]));
  CHECK(storage::configuration_label(rows[0]) == "compressor=none");
}

TEST_CASE("the pages draw the compression ratio and each rank's role as the server works them out", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  // Two workers and a parameter server (rank 2), as the resolved run says.
  const auto served = recorder.add_run(e, config("topk", 1));
  recorder.start_run(served);
  ResolvedRun resolved;
  resolved.workers = 2;
  resolved.world_size = 3;
  recorder.record_fact(served, ResolvedRun::kFact, resolved.to_json());
  {
    auto sink = recorder.metrics_sink(served);
    for (int rank = 0; rank < 3; ++rank) {
      sink->record({keys::kBytesSent, 0, 0, rank, 0.1, 250.0});
      sink->record({keys::kBytesDense, 0, 0, rank, 0.1, 1000.0});
      sink->record({keys::kTimeStep, 0, 0, rank, 0.1, 0.02});
    }
    sink->flush();
  }
  recorder.finish_run(served, storage::RunStatus::Finished);
  const auto silent = recorder.add_run(e, config("none", 1));  // sent nothing yet
  const auto rows = ui::runs_json(*db)["runs"];
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    const storage::RunRow run = storage::require_run(*db, row["id"].get<std::int64_t>());
    if (run.id == silent) {
      CHECK(row["compression"].is_null());
      continue;
    }
    CHECK(row["compression"].get<double>() == Approx(4.0));
    CHECK(row["compression"].get<double>() == run.compression_ratio());
  }
  const auto steps = ui::step_time_json(*db, served)["workers"];
  REQUIRE(steps.size() == 3);
  CHECK(steps[0]["role"] == "worker");
  CHECK(steps[1]["role"] == "worker");
  CHECK(steps[2]["role"] == "server");
}

TEST_CASE("every list of runs says which statuses the runs page filters by", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  recorder.add_run(recorder.add_experiment("sweep", "sweep.lua", "h"), config("none", 1));
  const nlohmann::json expected = {"QUEUED", "RUNNING", "stale", "FINISHED", "FAILED", "KILLED", "DIVERGED"};
  CHECK(ui::status_choices() == expected);
  CHECK(ui::runs_json(*db)["statuses"] == expected);
  CHECK(ui::newest_runs_json(*db, 1)["statuses"] == expected);
  CHECK(nlohmann::json::parse(ui::runs_json_text(*db))["statuses"] == expected);
  // Each but stale is a status the database stores, and reads back.
  for (const auto& text : expected)
    if (text != "stale") CHECK(storage::to_string(storage::run_status_from_string(text.get<std::string>())) == text);
}

TEST_CASE("the compare page's curves are each configuration's mean and standard deviation over its seeds",
          "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  // train_loss = step + offset; bytes_sent = `bytes` a step.
  const auto add = [&](const std::string& compressor, std::int64_t seed, double offset, double bytes) {
    const auto id = recorder.add_run(e, config(compressor, seed));
    recorder.start_run(id);
    auto sink = recorder.metrics_sink(id);
    for (int step = 0; step < 5; ++step) {
      sink->record({keys::kTrainLoss, step, 0, 0, 0.1 * step, step + offset});
      sink->record({keys::kBytesSent, step, 0, 0, 0.1 * step, bytes});
    }
    sink->flush();
    recorder.finish_run(id, storage::RunStatus::Finished);
    return id;
  };
  const auto a = add("none", 1, 0.0, 100), b = add("none", 2, 2.0, 300), c = add("topk", 1, 10.0, 10);
  ui::CompareQuery query;
  query.runs = {a, b, c};
  query.key = keys::kTrainLoss;
  const auto curves = ui::compare_json(*db, query)["curves"];
  REQUIRE(curves.size() == 2);
  CHECK(curves[0]["label"] == storage::configuration_label(storage::require_run(*db, a)));
  CHECK(curves[0]["n"] == 2);
  CHECK(curves[1]["n"] == 1);
  REQUIRE(curves[0]["x"].size() == 5);
  for (int step = 0; step < 5; ++step) {
    CHECK(curves[0]["x"][step].get<double>() == step);
    CHECK(curves[0]["mean"][step].get<double>() == Approx(step + 1.0));
    CHECK(curves[0]["sd"][step].get<double>() == Approx(std::sqrt(2.0)));  // the sample sd of {s, s + 2}
    CHECK(curves[1]["mean"][step].get<double>() == Approx(step + 10.0));
    CHECK(curves[1]["sd"][step].get<double>() == 0.0);
  }
  // Against the bytes sent: each point at the mean over the seeds of the bytes sent so far.
  query.x = ui::CompareX::Bytes;
  const auto by_bytes = ui::compare_json(*db, query)["curves"];
  for (int step = 0; step < 5; ++step) CHECK(by_bytes[0]["x"][step].get<double>() == Approx(200.0 * (step + 1)));
  // Without bands, a curve per run, named by the run.
  query.bands = false;
  const auto apart = ui::compare_json(*db, query)["curves"];
  REQUIRE(apart.size() == 3);
  CHECK(apart[2]["label"] == "run " + std::to_string(c) + ": " + storage::require_run(*db, c).name);
  CHECK(apart[1]["mean"][0].get<double>() == Approx(2.0));
}

TEST_CASE("each row of the experiment's tables says which configuration or run it is about", "[ui][api]") {
  TempDir tmp;
  auto db = storage::Database::open(tmp.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("sweep", "sweep.lua", "h");
  for (const auto& [compressor, seed, accuracy] : {std::tuple{"none", 1, 0.9}, {"none", 2, 0.91}, {"topk", 1, 0.8}})
    record(recorder, recorder.add_run(e, config(compressor, seed)), accuracy);
  const auto report = ui::experiment_json(*db, "sweep");
  const auto& configurations = report["configurations"];
  REQUIRE(configurations.size() == 2);
  std::map<std::int64_t, std::string> name_of;
  for (const auto& row : storage::list_runs(*db)) name_of[row.id] = row.name;
  std::size_t about_configurations = 0, about_runs = 0;
  for (const auto& section : report["sections"])
    for (const auto& table : section["tables"]) {
      REQUIRE(table["row_configurations"].size() == table["rows"].size());
      REQUIRE(table["row_runs"].size() == table["rows"].size());
      for (std::size_t r = 0; r < table["rows"].size(); ++r) {
        INFO(section["heading"] << ": " << table["rows"][r].dump());
        const auto& first_cell = table["rows"][r][0];
        // A row named as a configuration is one the brush filters: it says so.
        for (const auto& c : configurations)
          if (first_cell == c["label"]) CHECK(table["row_configurations"][r] == c["id"]);
        if (const auto& id = table["row_configurations"][r]; !id.is_null()) {
          // As shown: the row of configuration `id` names it by its label.
          REQUIRE(id.get<std::size_t>() < configurations.size());
          CHECK(configurations[id.get<std::size_t>()]["id"] == id);
          CHECK(first_cell == configurations[id.get<std::size_t>()]["label"]);
          ++about_configurations;
        }
        if (const auto& run = table["row_runs"][r]; !run.is_null()) {
          CHECK(first_cell == name_of.at(run.get<std::int64_t>()));
          ++about_runs;
        }
      }
    }
  CHECK(about_configurations >= 2 * 2);  // at least the answer's and another table's, each configuration once
  CHECK(about_runs == 3);                // the table of runs
}
