#pragma once
// A deterministic database for report tests: runs written through storage::Recorder and its
// metrics sink with fixed values, so every number in a report can be computed by hand.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/metric_keys.hpp"
#include "reports/gnuplot.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"

namespace laconic::reports::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("laconic-reports-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // leave a stray directory rather than throw from a destructor
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Figures off: a gnuplot that is not there, so reports build their tables only.
inline const GnuplotOptions kNoFigures{"/nonexistent/gnuplot", 5};

inline bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

/// One run: `epochs` x `steps` steps on each of `workers` ranks, every per-step value the same
/// for every step and worker; `servers` extra ranks record server rounds (epoch -1).
struct RunSpec {
  std::string name;
  std::map<std::string, Value> swept;  ///< "seed" is added from `seed`
  std::int64_t seed = 1;
  std::string model = "lenet5";
  std::string compressor = "none";
  std::map<std::string, Value> compressor_fields;
  std::int64_t workers = 2;
  int servers = 0;
  int steps = 2;                            ///< per epoch
  std::vector<double> accuracy{0.5, 0.75};  ///< per epoch, worker 0; also fixes the epoch count
  std::vector<double> epoch_time{10, 12};   ///< s per epoch, every worker
  double bytes_sent = 250000, bytes_dense = 250000, payload_bytes = 250000;
  double forward = 0.01, backward = 0.02, optimizer = 0.005, compress = 0, decompress = 0;
  double communicate = 0.005, projected = 0.002;
  std::optional<double> overlapped;  ///< time_overlapped per step (allreduce { overlap = true })
  /// time_wait, recorded on every `wait_every`-th step only (local SGD and DiLoCo wait once a round)
  std::optional<double> wait;
  int wait_every = 1;
  /// A straggler: rank `rank` sleeps `delay` s a step (time_delay; 0 for the others) and arrives
  /// last, so the others' time_wait is `wait` (or 0) plus `delay`, its own `wait` (or 0).
  struct Straggler {
    int rank = 0;
    double delay = 0;
  };
  std::optional<Straggler> straggler;
  /// time_overlap_budget, on the same steps as time_wait (diloco { overlap }: on a step that
  /// applies a fragment's exchange).
  std::optional<double> overlap_budget;
  /// messages and link_bytes per step (what --link projects); unset: not recorded, as by an
  /// older laconic.
  std::optional<double> messages, link_bytes;
  /// The bandwidth of the emulated link the run trained on (link { emulate = true }); unset: a
  /// link of 1Gbit that was only projected.
  std::optional<std::string> emulated;
  std::string latency = "50us";  ///< the link's latency
  double server_bytes_sent = 1e9;                  ///< per server round; must never reach a worker figure
  std::optional<double> model_parameters = 62500;  ///< recorded once by worker 0 at step 0
  std::optional<std::string> baseline;             ///< the experiment's `baseline = NAME()`; unset: none, the default
  std::string status = "FINISHED";
};

inline RunConfig config_of(const std::string& experiment, const RunSpec& spec) {
  RunConfig config;
  config.experiment = experiment;
  config.name = spec.name;
  config.model = {"model", spec.model, {}};
  config.compressor = {"compressor", spec.compressor, spec.compressor_fields};
  config.network = {"network",
                    "link",
                    {{"bandwidth", Value{spec.emulated.value_or("1Gbit")}},
                     {"latency", Value{spec.latency}},
                     {"emulate", Value{spec.emulated.has_value()}}}};
  config.workers = spec.workers;
  config.seed = spec.seed;
  config.epochs = static_cast<std::int64_t>(spec.accuracy.size());
  config.swept = spec.swept;
  config.swept["seed"] = spec.seed;
  if (spec.baseline) config.baseline = {"compressor", *spec.baseline, {}};
  return config;
}

inline std::int64_t record_run(storage::Database& db, storage::Recorder& recorder, std::int64_t experiment,
                               const std::string& experiment_name, const RunSpec& spec) {
  const auto run = recorder.add_run(experiment, config_of(experiment_name, spec));
  recorder.start_run(run);
  {
    auto sink = recorder.metrics_sink(run);
    const double step_time =
        spec.forward + spec.backward + spec.optimizer + spec.compress + spec.decompress + spec.communicate;
    const int epochs = static_cast<int>(spec.accuracy.size());
    if (spec.model_parameters) sink->record({"model_parameters", 0, 0, 0, 0, *spec.model_parameters});
    double trained = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      for (int s = 0; s < spec.steps; ++s) {
        const std::int64_t step = epoch * spec.steps + s;
        for (int worker = 0; worker < spec.workers; ++worker) {
          sink->record({"train_loss", step, epoch, worker, 0, 1.0});
          sink->record({"time_forward", step, epoch, worker, 0, spec.forward});
          sink->record({"time_backward", step, epoch, worker, 0, spec.backward});
          sink->record({"time_optimizer", step, epoch, worker, 0, spec.optimizer});
          sink->record({"time_compress", step, epoch, worker, 0, spec.compress});
          sink->record({"time_decompress", step, epoch, worker, 0, spec.decompress});
          sink->record({"time_communicate", step, epoch, worker, 0, spec.communicate});
          if (spec.overlapped) sink->record({"time_overlapped", step, epoch, worker, 0, *spec.overlapped});
          const bool slow = spec.straggler && spec.straggler->rank == worker;
          const double late = spec.straggler && !slow ? spec.straggler->delay : 0;
          if ((spec.wait || spec.straggler) && (step + 1) % spec.wait_every == 0)
            sink->record({"time_wait", step, epoch, worker, 0, spec.wait.value_or(0) + late});
          if (spec.straggler) sink->record({keys::kTimeDelay, step, epoch, worker, 0, slow ? spec.straggler->delay : 0});
          if (spec.overlap_budget && (step + 1) % spec.wait_every == 0)
            sink->record({keys::kTimeOverlapBudget, step, epoch, worker, 0, *spec.overlap_budget});
          if (spec.messages) sink->record({"messages", step, epoch, worker, 0, *spec.messages});
          if (spec.link_bytes) sink->record({"link_bytes", step, epoch, worker, 0, *spec.link_bytes});
          sink->record({"time_step", step, epoch, worker, 0, step_time});
          sink->record({keys::kBytesSent, step, epoch, worker, 0, spec.bytes_sent});
          sink->record({"bytes_received", step, epoch, worker, 0, spec.bytes_sent});
          sink->record({"bytes_dense", step, epoch, worker, 0, spec.bytes_dense});
          sink->record({"payload_bytes", step, epoch, worker, 0, spec.payload_bytes});
          sink->record({"projected_time_communicate", step, epoch, worker, 0, spec.projected});
          sink->record({"projected_time_step", step, epoch, worker, 0, step_time - spec.communicate + spec.projected});
        }
        for (int server = 0; server < spec.servers; ++server) {
          const int rank = static_cast<int>(spec.workers) + server;
          for (const char* key : {keys::kBytesSent, "bytes_dense", "payload_bytes", "time_communicate",
                                  "projected_time_communicate", "projected_time_step"})
            sink->record({key, step, -1, rank, 0, spec.server_bytes_sent});
        }
      }
      const std::int64_t last = (epoch + 1) * spec.steps - 1;
      // As a worker records it: seconds since training started, here the sum of the epoch times.
      trained += spec.epoch_time[static_cast<std::size_t>(epoch)];
      sink->record({"test_accuracy", last, epoch, 0, trained, spec.accuracy[static_cast<std::size_t>(epoch)]});
      for (int worker = 0; worker < spec.workers; ++worker) {
        sink->record({"epoch_train_loss", last, epoch, worker, 0, 1.0});
        sink->record({"epoch_time", last, epoch, worker, 0, spec.epoch_time[static_cast<std::size_t>(epoch)]});
      }
    }
  }
  recorder.finish_run(run, storage::run_status_from_string(spec.status));
  // Fixed start and end, so nothing in a report depends on when the test ran.
  storage::Statement times(db.handle(), "UPDATE runs SET started = 1000, ended = 1060 WHERE id = ?1");
  times.bind_int64(1, run);
  times.run();
  return run;
}

/// Seed `seed` of the dense configuration (compressor none), with `accuracy` per epoch.
inline RunSpec dense(std::int64_t seed, std::vector<double> accuracy) {
  RunSpec spec;
  spec.name = "compressor=none,seed=" + std::to_string(seed);
  spec.swept = {{"compressor", Value{std::string("none")}}};
  spec.seed = seed;
  spec.accuracy = std::move(accuracy);
  return spec;
}

/// Seed `seed` of Top-k 1%: 100x fewer bytes, 4 ms of compress and decompress per step.
inline RunSpec topk(std::int64_t seed, std::vector<double> accuracy) {
  RunSpec spec = dense(seed, std::move(accuracy));
  spec.name = "compressor=topk,ratio=0.01,seed=" + std::to_string(seed);
  spec.swept = {{"compressor", Value{std::string("topk")}}, {"compressor.ratio", Value{0.01}}};
  spec.compressor = "topk";
  spec.compressor_fields = {{"ratio", Value{0.01}}};
  spec.bytes_sent = 2500;
  spec.payload_bytes = 2500;
  spec.compress = 0.003;
  spec.decompress = 0.001;
  return spec;
}

// The same runs with the messages they sent per step: dense 2 messages of 1 Mbit in all, Top-k
// 4 messages of 10 kbit (what --link and "Does it pay off?" project).
inline RunSpec dense_with_messages(std::int64_t seed, std::vector<double> accuracy) {
  RunSpec spec = dense(seed, std::move(accuracy));
  spec.messages = 2;
  spec.link_bytes = 125000;
  return spec;
}

inline RunSpec topk_with_messages(std::int64_t seed, std::vector<double> accuracy) {
  RunSpec spec = topk(seed, std::move(accuracy));
  spec.messages = 4;
  spec.link_bytes = 1250;
  return spec;
}

}  // namespace laconic::reports::testing
