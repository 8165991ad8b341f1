#pragma once
// One table of `--where` cases that both filters must pass: `laconic runs --where`
// (tests/cli/inspect_test.cpp, the binary as a user runs it) and the UI's runs page in a real
// browser (tests/ui/ui.test.mjs, over `ui_fixtures where DB CASES.json`, which writes these
// runs and this table). Both ask storage::runs_where; the table pins what they agree on.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/metric_keys.hpp"
#include "storage/database.hpp"
#include "storage/recorder.hpp"
#include "tests/storage/storage_test_support.hpp"

namespace laconic::storage::testing {

/// A condition list as the UI's box takes it (comma-separated; `laconic runs` gets one --where
/// per condition), the names of the runs it keeps (in id order), or a part of its refusal.
struct WhereCase {
  std::string where;
  std::vector<std::string> names;
  std::string error;  ///< non-empty: the filter refuses the conditions with a message containing this
};

/// Experiment "where": none (workers 2, lr 0.05, accuracy 0.9), topk ratio 0.01 (workers 4,
/// lr 0.1, accuracy 0.8) and topk ratio 0.1 (workers 2, lr 0.1, accuracy 0.85), all FINISHED.
inline void record_where_runs(Database& db) {
  Recorder recorder(db);
  const auto experiment = recorder.add_experiment("where", "where.lua", "h");
  const auto topk = [](double ratio, std::int64_t workers, const std::string& name) {
    RunConfig config = sample_config("topk", 1);
    config.compressor.fields["ratio"] = ratio;
    config.optimizer.fields["lr"] = 0.1;
    config.workers = workers;
    config.swept = {{"compressor", std::string("topk")}, {"compressor.ratio", ratio}, {"seed", std::int64_t{1}}};
    config.name = name;
    return config;
  };
  const std::pair<RunConfig, double> runs[] = {
      {sample_config("none", 1), 0.9},
      {topk(0.01, 4, "compressor=topk,ratio=0.01,seed=1"), 0.8},
      {topk(0.1, 2, "compressor=topk,ratio=0.1,seed=1"), 0.85},
  };
  for (auto [config, accuracy] : runs) {
    config.experiment = "where";
    const auto id = recorder.add_run(experiment, config);
    recorder.start_run(id);
    auto sink = recorder.metrics_sink(id);
    sink->record({keys::kTrainLoss, 0, 0, 0, 0.1, 1.0});
    sink->record({keys::kTestAccuracy, 0, 0, 0, 0.1, accuracy});
    sink->flush();
    recorder.finish_run(id, RunStatus::Finished);
  }
}

inline const std::vector<WhereCase>& where_cases() {
  static const std::string none = "compressor=none,seed=1";
  static const std::string topk1 = "compressor=topk,ratio=0.01,seed=1";
  static const std::string topk10 = "compressor=topk,ratio=0.1,seed=1";
  static const std::vector<WhereCase> cases = {
      {"compressor=topk", {topk1, topk10}, ""},
      {"ratio=1e-2", {topk1}, ""},                      // a swept field by its last part, numerically
      {"compressor.ratio <= 0.1", {topk1, topk10}, ""},  // an ordering holds only between numbers
      {"workers=4.0", {topk1}, ""},                     // a config field nobody swept
      {"optimizer.lr=0.05", {none}, ""},
      {"compressor=topk, workers=2", {topk10}, ""},     // AND
      {"test_accuracy>=0.85", {none, topk10}, ""},      // a final metric
      {"compressor!=topk", {none}, ""},
      {"compressor>3", {}, ""},  // a name is not a number
      {"model=lenet5", {none, topk1, topk10}, ""},       // a component compares its name
      {"compresor=topk", {}, "did you mean 'compressor'"},
      {"ratio<small", {}, "'small' is not one"},
      {"compressor", {}, "compressor"},
  };
  return cases;
}

/// The table as JSON, for the browser test: [{where, names, error}].
inline nlohmann::json where_cases_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const WhereCase& c : where_cases()) out.push_back({{"where", c.where}, {"names", c.names}, {"error", c.error}});
  return out;
}

}  // namespace laconic::storage::testing
