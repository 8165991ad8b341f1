#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "fixture.hpp"
#include "reports/configurations.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/report.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "engine/core/metric_keys.hpp"

using namespace laconic;
using namespace laconic::storage;
using namespace laconic::reports;

namespace {

using namespace laconic::reports::testing;

std::string read(const std::string& path) { return testing::read_text(path); }

RunConfig config_named(const std::string& name) {
  RunConfig config;
  config.experiment = "fmnist-topk";
  config.name = name;
  return config;
}

// Per-step values of one run: the same for every step and worker, so totals are easy to check.
struct StepValues {
  double bytes_sent, bytes_dense, forward, backward, compress, communicate;
};

// Records 2 epochs x 2 steps x 2 workers, then sets started/ended so the wall time is known.
std::int64_t record_run(Database& db, Recorder& recorder, std::int64_t experiment, const std::string& name,
                        const StepValues& v, const double (&accuracy)[2], const double (&test_loss)[2],
                        const double (&train_loss)[2][2], double wall_time) {
  const auto run = recorder.add_run(experiment, config_named(name));
  recorder.start_run(run);
  {
    auto sink = recorder.metrics_sink(run);
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (int s = 0; s < 2; ++s)
        for (int worker = 0; worker < 2; ++worker) {
          const int step = epoch * 2 + s;
          sink->record({keys::kBytesSent, step, epoch, worker, 0, v.bytes_sent});
          sink->record({"bytes_dense", step, epoch, worker, 0, v.bytes_dense});
          sink->record({"time_forward", step, epoch, worker, 0, v.forward});
          sink->record({"time_backward", step, epoch, worker, 0, v.backward});
          sink->record({"time_compress", step, epoch, worker, 0, v.compress});
          sink->record({"time_communicate", step, epoch, worker, 0, v.communicate});
          sink->record({"train_loss", step, epoch, worker, 0, 9.0});
        }
      const int last_step = epoch * 2 + 1;
      sink->record({"test_accuracy", last_step, epoch, 0, 0, accuracy[epoch]});
      sink->record({"test_loss", last_step, epoch, 0, 0, test_loss[epoch]});
      for (int worker = 0; worker < 2; ++worker)
        sink->record({"epoch_train_loss", last_step, epoch, worker, 0, train_loss[epoch][worker]});
    }
  }
  recorder.finish_run(run, RunStatus::Finished);
  Statement times(db.handle(), "UPDATE runs SET started = 1000, ended = ?2 WHERE id = ?1");
  times.bind_int64(1, run).bind_double(2, 1000 + wall_time);
  times.run();
  return run;
}

}  // namespace

TEST_CASE("the report compares the latest run of each run name with exact values", "[reports]") {
  TempDir dir("report");
  auto db = Database::open(dir.file("runs.db"));
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("fmnist-topk", "experiments/fmnist.lua", "0badc0de");
  record_run(*db, recorder, experiment, "compressor=none", {250000, 250000, 0.01, 0.02, 0, 0.005}, {0.5, 0.75},
             {1.2, 0.8}, {{1.0, 1.2}, {0.6, 0.8}}, 62.5);
  // A failed first attempt of topk, then the run that counts.
  const auto failed = recorder.add_run(experiment, config_named("compressor=topk"));
  recorder.finish_run(failed, RunStatus::Failed, "worker 1 died");
  record_run(*db, recorder, experiment, "compressor=topk", {2500, 250000, 0.01, 0.02, 0.003, 0.001}, {0.4, 0.6875},
             {1.5, 1.1}, {{1.3, 1.5}, {0.85, 0.95}}, 30);

  const auto paths = write_report(*db, "fmnist-topk", dir.file("out/fmnist"));
  CHECK(paths.markdown == dir.file("out/fmnist/report.md"));
  CHECK(paths.html == dir.file("out/fmnist/index.html"));
  const std::string md = read(paths.markdown);
  INFO(md);

  CHECK(md.rfind("# Experiment fmnist-topk\n", 0) == 0);
  CHECK(has_line(md, "- file: `experiments/fmnist.lua`"));
  CHECK(has_line(md, "- hash: `0badc0de`"));
  CHECK(has_line(md, "- runs: 2 run names, 3 runs recorded"));
  CHECK(has_line(md,
                 "| run | status | final test accuracy | bytes sent | dense bytes | compression | "
                 "wall time (s) | error |"));
  CHECK(has_line(md, "|---|---|---:|---:|---:|---:|---:|---|"));
  CHECK(has_line(md, "| compressor=none | FINISHED | 0.7500 | 2.00 MB | 2.00 MB | 1.0x | 62.5 |  |"));
  CHECK(has_line(md, "| compressor=topk | FINISHED | 0.6875 | 20.0 kB | 2.00 MB | 100.0x | 30.0 |  |"));
  CHECK_FALSE(has_line(md, "| compressor=topk | FAILED |"));  // only the latest run of a name
  CHECK(md.find("FAILED") == std::string::npos);

  // Neither run swept anything, so both are seed 1 of one configuration: one sample of what
  // depends on the seed (their mean), not two. RunConfig's default model.
  CHECK(has_line(md, "- compared: 2 FINISHED runs in 1 configurations"));
  CHECK(has_line(md, "| model=lenet5, workers=2 | 0.7188 (n=1) |"));
  CHECK(md.find("| compressor=none |") < md.find("| compressor=topk |"));
  CHECK(md.find("## Final test accuracy") < md.find("## Runs"));

  const std::string html = read(paths.html);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<td>compressor=topk</td><td>FINISHED</td><td class=\"num\">0.6875</td>") != std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
  // No external resources: nothing is loaded from elsewhere (the SVG links are relative).
  CHECK(html.find("src=\"http") == std::string::npos);
  CHECK(html.find("href=\"http") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
}

TEST_CASE("strings from the database are escaped in the HTML report", "[reports][html]") {
  TempDir dir("report");
  auto db = Database::open(dir.file("runs.db"));
  Recorder recorder(*db);
  const auto experiment = recorder.add_experiment("x", "<b>path</b>.lua", "h&h");
  const auto run = recorder.add_run(experiment, config_named("<script>alert('pwned')</script>"));
  recorder.finish_run(run, RunStatus::Killed);

  const auto paths = write_report(*db, "x", dir.file("out"));
  const std::string html = read(paths.html);
  INFO(html);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("<code>&lt;b&gt;path&lt;/b&gt;.lua</code>") != std::string::npos);
  CHECK(html.find("<code>h&amp;h</code>") != std::string::npos);

  const std::string md = read(paths.markdown);
  CHECK(has_line(md, "| \\<script\\>alert('pwned')\\</script\\> | KILLED | - | 0 B | 0 B | - | 0.0 |  |"));
}

TEST_CASE("a report of an experiment without runs lists the experiments that exist", "[reports][errors]") {
  TempDir dir("report");
  auto db = Database::open(dir.file("runs.db"));
  CHECK_THROWS_WITH(write_report(*db, "fmnist", dir.file("out")),
                    Catch::Contains("'fmnist' has no runs") && Catch::Contains("the database has no experiments"));

  Recorder recorder(*db);
  const auto cifar = recorder.add_experiment("cifar", "cifar.lua", "h1");
  recorder.add_run(cifar, config_named("a"));
  recorder.add_experiment("mnist", "mnist.lua", "h2");
  CHECK_THROWS_MATCHES(write_report(*db, "fmnist", dir.file("out")), ConfigError,
                       Catch::Matchers::Message("experiment 'fmnist' has no runs in " + dir.file("runs.db") +
                                                "; experiments: cifar, mnist"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST_CASE("a configuration and its record name the same baseline: RunConfig::is_baseline and parse_run",
          "[reports]") {
  const auto spec = [](const std::string& name, std::map<std::string, Value> fields = {}) {
    return ComponentSpec{"compressor", name, std::move(fields)};
  };
  struct Case {
    ComponentSpec compressor;
    std::optional<ComponentSpec> baseline;
    bool expected;
  };
  const Case cases[] = {
      {spec("none"), std::nullopt, true},
      {spec("none", {{"scope", Value{std::string("layer")}}}), std::nullopt, true},  // none, whatever its scope
      {spec("topk", {{"ratio", Value{0.01}}}), std::nullopt, false},
      {spec("fp16"), spec("fp16"), true},
      {spec("none"), spec("fp16"), false},
      {spec("topk", {{"ratio", Value{0.01}}}), spec("topk", {{"ratio", Value{0.1}}}), false},  // its fields too
      {spec("topk", {{"ratio", Value{0.1}}}), spec("topk", {{"ratio", Value{0.1}}}), true},
  };
  for (const Case& c : cases) {
    RunConfig config;
    config.compressor = c.compressor;
    if (c.baseline) config.baseline = *c.baseline;
    INFO(config.to_json().dump());
    CHECK(config.is_baseline() == c.expected);
    CHECK(laconic::reports::parse_run(storage::RunRow{}, config.to_json().dump()).is_baseline == c.expected);
  }
}

TEST_CASE("a swept schedule is part of the method: one row, and the baseline is the synchronous one",
          "[reports]") {
  const auto run_of = [](const std::string& compressor, const std::string& swept) {
    RunConfig config;
    config.compressor = {"compressor", compressor, {}};
    storage::RunRow row;
    row.swept = swept;
    return laconic::reports::parse_run(row, config.to_json().dump());
  };
  const auto sync = run_of("none", R"({"compressor": "none", "schedule": "synchronous", "seed": 1})");
  const auto diloco = run_of(
      "fp16", R"({"compressor": "fp16", "schedule": "diloco", "schedule.inner_steps": 50,
                  "schedule.outer": {"name": "sgd", "lr": 0.7, "nesterov": true}, "seed": 1})");
  const auto diloco_none = run_of("none", R"({"compressor": "none", "schedule": "diloco", "seed": 1})");
  CHECK(sync.is_baseline);
  CHECK_FALSE(diloco_none.is_baseline);  // the baseline compressor, but not the baseline schedule
  CHECK_FALSE(diloco.is_baseline);
  CHECK(cell_of(sync).second == "none schedule=synchronous");
  CHECK(cell_of(diloco).second == "fp16 schedule=diloco inner_steps=50 outer=sgd{lr=0.7,nesterov=true}");
  CHECK(cell_of(diloco).first == cell_of(sync).first);
  // A schedule the file does not sweep leaves the baseline alone.
  CHECK(run_of("none", R"({"compressor": "none", "seed": 1})").is_baseline);
}

TEST_CASE("a wait recorded once a round counts once a round in the step", "[reports]") {
  // Local SGD and DiLoCo record time_wait on a round's last step only: 0.4 s every 4th of 8
  // steps is 0.1 s a step, not 0.4.
  TempDir dir("wait");
  auto db = Database::open(dir.file("runs.db"));
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("wait", "wait.lua", "h");
  RunSpec spec = dense(1, {0.5, 0.75});
  spec.steps = 4;
  spec.wait = 0.4;
  spec.wait_every = 4;
  record_run(*db, recorder, e, "wait", spec);
  RunSpec every_step = dense(2, {0.5, 0.75});
  every_step.steps = 4;
  every_step.wait = 0.4;
  record_run(*db, recorder, e, "wait", every_step);
  const ExperimentRuns runs = load_experiment_runs(*db, "wait");
  REQUIRE(runs.finished.size() == 2);
  CHECK(collect_run_data(*db, runs.finished[0], "test_accuracy").wait == Approx(0.1));
  CHECK(collect_run_data(*db, runs.finished[1], "test_accuracy").wait == Approx(0.4));
}
