#pragma once
// A database filled through the Recorder the way `laconic run` fills it, without training, for
// the end-to-end tests of the read-side commands (inspect_test.cpp, annotations_test.cpp), and
// helpers to read their output.
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "engine/core/metric_keys.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"

namespace laconic::testing {

inline RunConfig config_of(const std::string& experiment, const std::string& compressor, double ratio,
                           std::int64_t workers, double lr) {
  RunConfig c;
  c.experiment = experiment;
  c.dataset = {"dataset", "fashion_mnist", {}};
  c.model = {"model", "lenet5", {}};
  c.optimizer = {"optimizer", "sgd", {{"lr", lr}, {"momentum", 0.9}}};
  c.topology = {"topology", "allreduce", {}};
  c.schedule = {"schedule", "synchronous", {}};
  c.compressor = {"compressor", compressor, {}};
  c.workers = workers;
  c.seed = 1;
  c.swept = {{"compressor", compressor}, {"seed", std::int64_t{1}}};
  c.name = "compressor=" + compressor;
  if (compressor == "topk") {
    c.compressor.fields["ratio"] = ratio;
    c.swept["compressor.ratio"] = ratio;
    c.name += ",ratio=" + format_value(Value{ratio});
  }
  c.name += ",seed=1";
  return c;
}

// Two epochs of metrics of `workers` workers, 3 steps each; accuracy and loss of the last epoch
// are the arguments.
inline void record_run(storage::Recorder& recorder, std::int64_t run, int workers, double accuracy, double loss,
                       double bytes_per_step, double dense_per_step) {
  recorder.start_run(run);
  auto sink = recorder.metrics_sink(run);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (int w = 0; w < workers; ++w) {
      for (int s = 0; s < 3; ++s) {
        const int step = epoch * 3 + s;
        sink->record({"train_loss", step, epoch, w, 0.1 * step, 2.0 - 0.1 * step});
        sink->record({"time_step", step, epoch, w, 0.1 * step, 0.05});
        // compute 0.035 of the 0.05 s step: 70% compute utilization
        sink->record({"time_forward", step, epoch, w, 0.1 * step, 0.02});
        sink->record({"time_backward", step, epoch, w, 0.1 * step, 0.01});
        sink->record({"time_optimizer", step, epoch, w, 0.1 * step, 0.005});
        sink->record({"time_communicate", step, epoch, w, 0.1 * step, 0.015});
        sink->record({keys::kBytesSent, step, epoch, w, 0.1 * step, bytes_per_step});
        sink->record({"bytes_dense", step, epoch, w, 0.1 * step, dense_per_step});
      }
      sink->record({"epoch_train_loss", epoch * 3 + 2, epoch, w, 0.3, 1.8 - 0.2 * epoch});
      sink->record({"epoch_time", epoch * 3 + 2, epoch, w, 0.3, 3.0 + w});
    }
    sink->record({"test_accuracy", epoch * 3 + 2, epoch, 0, 0.3, epoch == 1 ? accuracy : accuracy / 2});
    sink->record({"test_loss", epoch * 3 + 2, epoch, 0, 0.3, epoch == 1 ? loss : 2 * loss});
  }
}

struct RecordedRuns {
  std::string dir = make_temp_dir();
  std::string db = dir + "/t.db";
  std::int64_t none = 0, topk1 = 0, topk10 = 0, diverged = 0, lm = 0;

  RecordedRuns() {
    auto database = storage::Database::open(db);
    storage::Recorder recorder(*database);
    const auto fmnist = recorder.add_experiment("fmnist", "fmnist.lua", "h1");
    none = recorder.add_run(fmnist, config_of("fmnist", "none", 0, 2, 0.05));
    topk1 = recorder.add_run(fmnist, config_of("fmnist", "topk", 0.01, 4, 0.1));
    topk10 = recorder.add_run(fmnist, config_of("fmnist", "topk", 0.1, 2, 0.1));
    diverged = recorder.add_run(fmnist, config_of("fmnist", "qsgd", 0, 2, 0.5));
    record_run(recorder, none, 2, 0.80, 0.55, 4000, 4000);
    record_run(recorder, topk1, 4, 0.70, 0.75, 80, 4000);
    record_run(recorder, topk10, 2, 0.85, 0.45, 800, 4000);
    recorder.finish_run(none, storage::RunStatus::Finished);
    recorder.finish_run(topk1, storage::RunStatus::Finished);
    recorder.finish_run(topk10, storage::RunStatus::Finished);
    recorder.start_run(diverged);
    {
      auto sink = recorder.metrics_sink(diverged);
      sink->record({"train_loss", 0, 0, 0, 0.1, std::nan("")});
      sink->record({"test_accuracy", 2, 0, 0, 0.3, std::nan("")});
      sink->record({"test_loss", 2, 0, 0, 0.3, std::numeric_limits<double>::infinity()});
    }
    recorder.finish_run(diverged, storage::RunStatus::Diverged, "loss became NaN at step 0");
    const auto text = recorder.add_experiment("lm", "lm.lua", "h2");
    lm = recorder.add_run(text, config_of("lm", "none", 0, 2, 1.0));
    recorder.start_run(lm);
    {
      auto sink = recorder.metrics_sink(lm);
      sink->record({"test_perplexity", 0, 0, 0, 1.0, 123.5});
      sink->record({"test_accuracy", 0, 0, 0, 1.0, 0.25});
    }
    recorder.finish_run(lm, storage::RunStatus::Finished);
  }
  ~RecordedRuns() { std::filesystem::remove_all(dir); }
  CommandResult laconic(const std::string& args) const { return run_laconic(dir, args + " --db t.db", 60); }
};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line of `text` that contains `needle` ("" if none).
inline std::string line_with(const std::string& text, const std::string& needle) {
  for (const auto& line : lines_of(text))
    if (line.find(needle) != std::string::npos) return line;
  return "";
}

// The first line of `text` that starts with `prefix` ("" if none).
inline std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& line : lines_of(text))
    if (line.starts_with(prefix)) return line;
  return "";
}

// The whitespace-separated fields of a line.
inline std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string field; in >> field;) out.push_back(field);
  return out;
}

inline std::int64_t count_rows(const std::string& db, const std::string& table) {
  auto database = storage::Database::open_read_only(db);
  storage::Statement q(database->handle(), "SELECT count(*) FROM " + table);
  q.step();
  return q.column_int64(0);
}

}  // namespace laconic::testing
