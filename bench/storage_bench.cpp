// The storage writer at scale: builds a database of many runs through the real writer
// (storage::Recorder and its SqliteSink) and prints ingest throughput and the writer's peak
// memory. bench/storage_bench.sh drives it and times the read commands on the result; the
// figures are in docs/benchmarks.md.
//
//   laconic_storage_bench build  --db PATH [--runs 1000] [--rows 10000000] [--experiments 8]
//   laconic_storage_bench stream --db PATH [--rows 1000000]      (one run, for peak memory)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "engine/core/metric_keys.hpp"
#include "engine/core/run_config.hpp"
#include "storage/database.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"

namespace {

using laconic::MetricRecord;
using laconic::RunConfig;

// The per-step keys of docs/schema.md that every worker records at every step.
namespace keys = laconic::keys;
const std::vector<std::string> kStepKeys{keys::kTrainLoss,        keys::kTimeForward,
                                         keys::kTimeBackward,     keys::kTimeCompress,
                                         keys::kTimeDecompress,   keys::kTimeCommunicate,
                                         keys::kTimeOptimizer,    keys::kLr,
                                         keys::kTimeStep,         keys::kBytesSent,
                                         keys::kBytesReceived,    keys::kBytesDense,
                                         keys::kPayloadBytes,     keys::kProjectedTimeCommunicate,
                                         keys::kProjectedTimeStep};

const std::vector<std::string> kCompressors{"none",     "topk",    "qsgd",    "dgc",
                                            "powersgd", "signsgd", "randomk", "terngrad"};

// CPU seconds (user + system) this process has used: with other work on the machine, wall time
// alone mixes in the time spent waiting for a core.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Peak resident set of this process, KiB (VmHWM).
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// A cheap deterministic stream of values in [0, 1).
struct Lcg {
  std::uint64_t state;
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
  }
};

RunConfig config_of(const std::string& experiment, const std::string& compressor, double ratio, std::int64_t workers,
                    std::int64_t seed, std::int64_t epochs) {
  RunConfig c;
  c.experiment = experiment;
  c.dataset = {"dataset", "fashion_mnist", {}};
  c.model = {"model", "lenet5", {}};
  c.optimizer = {"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}};
  c.topology = {"topology", "allreduce", {{"algorithm", std::string("ring")}}};
  c.schedule = {"schedule", "synchronous", {}};
  c.compressor = {"compressor", compressor, {{"ratio", ratio}}};
  c.workers = workers;
  c.epochs = epochs;
  c.seed = seed;
  c.swept = {{"compressor", compressor}, {"compressor.ratio", ratio}, {"seed", seed}};
  c.name = "compressor=" + compressor + ",ratio=" + laconic::format_value(laconic::Value{ratio}) +
           ",seed=" + std::to_string(seed);
  return c;
}

// Streams about `rows` metric rows of one run the way a training run produces them: per step
// and worker the per-step keys, per epoch the epoch keys. Returns the rows written.
std::int64_t write_run(laconic::storage::Recorder& recorder, std::int64_t run, int workers, std::int64_t rows,
                       std::int64_t epochs, double ratio, Lcg& random) {
  recorder.start_run(run);
  const std::int64_t per_step = static_cast<std::int64_t>(kStepKeys.size()) * workers;
  const std::int64_t per_epoch_extra = 2 + 2 * workers;
  const std::int64_t steps = std::max<std::int64_t>(1, (rows - epochs * per_epoch_extra) / per_step);
  const std::int64_t steps_per_epoch = std::max<std::int64_t>(1, steps / epochs);
  auto sink = recorder.metrics_sink(run);
  MetricRecord record;
  std::int64_t written = 0;
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t epoch = std::min(epochs - 1, step / steps_per_epoch);
    for (int worker = 0; worker < workers; ++worker) {
      for (const std::string& key : kStepKeys) {
        record.key = key;
        record.step = step;
        record.epoch = epoch;
        record.worker = worker;
        record.wall_time = 0.05 * static_cast<double>(step);
        // 1.7 MB of dense gradient per step (LeNet-5 size order); the compressed traffic is
        // `ratio` of it, give or take.
        if (key == keys::kBytesDense)
          record.value = 1.7e6;
        else if (key == keys::kBytesSent || key == keys::kBytesReceived || key == keys::kPayloadBytes)
          record.value = std::floor(1.7e6 * ratio * (0.9 + 0.2 * random.next()));
        else
          record.value = random.next();
        sink->record(record);
        ++written;
      }
    }
    if ((step + 1) % steps_per_epoch == 0 || step + 1 == steps) {
      for (int worker = 0; worker < workers; ++worker) {
        sink->record({"epoch_train_loss", step, epoch, worker, 0.05 * static_cast<double>(step), random.next()});
        sink->record({"epoch_time", step, epoch, worker, 0.05 * static_cast<double>(step), 10 * random.next()});
        written += 2;
      }
      sink->record({"test_accuracy", step, epoch, 0, 0.05 * static_cast<double>(step), random.next()});
      sink->record({"test_loss", step, epoch, 0, 0.05 * static_cast<double>(step), random.next()});
      written += 2;
    }
  }
  sink.reset();  // commits the last partial batch
  recorder.finish_run(run, laconic::storage::RunStatus::Finished);
  return written;
}

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

std::int64_t flag(const std::map<std::string, std::string>& flags, const std::string& name, std::int64_t fallback) {
  const auto it = flags.find(name);
  return it == flags.end() ? fallback : std::stoll(it->second);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: laconic_storage_bench build|stream --db PATH [--runs N] [--rows N] [--experiments N]\n";
    return 2;
  }
  const std::string mode = argv[1];
  const auto flags = parse_flags(argc, argv);
  if (flags.count("--db") == 0) {
    std::cerr << "--db PATH is required\n";
    return 2;
  }
  const std::string path = flags.at("--db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  const std::int64_t rows = flag(flags, "--rows", mode == "stream" ? 1'000'000 : 10'000'000);
  const std::int64_t runs = mode == "stream" ? 1 : flag(flags, "--runs", 1000);
  const std::int64_t experiments = mode == "stream" ? 1 : flag(flags, "--experiments", 8);

  auto db = laconic::storage::Database::open(path);
  // Diagnosis only (what a cost is made of), never for the published figures.
  if (flags.count("--pragma") != 0) laconic::storage::exec(db->handle(), flags.at("--pragma"));
  laconic::storage::Recorder recorder(*db);
  Lcg random{42};
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds();
  std::int64_t written = 0;
  for (std::int64_t r = 0; r < runs; ++r) {
    // Experiments in turn; within one, compressors x ratios x seeds; 2 to 4 workers.
    const std::int64_t e = r % experiments;
    const std::string experiment = "scale-" + std::to_string(e);
    const std::int64_t experiment_id =
        recorder.add_experiment(experiment, experiment + ".lua", "hash" + std::to_string(e));
    const std::int64_t index = r / experiments;
    const std::string compressor = kCompressors[static_cast<std::size_t>(index) % kCompressors.size()];
    const double ratio = std::pow(10.0, -1.0 - static_cast<double>((index / kCompressors.size()) % 3));
    const int workers = 2 + static_cast<int>(r % 3);
    const std::int64_t seed = 1 + static_cast<std::int64_t>(index / (kCompressors.size() * 3));
    const std::int64_t epochs = 5;
    const std::int64_t id =
        recorder.add_run(experiment_id, config_of(experiment, compressor, ratio, workers, seed, epochs));
    // Spread the rows evenly; the last run takes the remainder.
    const std::int64_t share = r + 1 == runs ? rows - written : rows / runs;
    written += write_run(recorder, id, workers, share, epochs, compressor == "none" ? 1.0 : ratio, random);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = cpu_seconds() - cpu_start;
  std::printf(
      "%s: %lld runs, %lld metric rows in %.2f s: %.0f rows/s (%.2f CPU s: %.0f rows per CPU second); "
      "writer peak RSS %.1f MiB\n",
      mode.c_str(), static_cast<long long>(runs), static_cast<long long>(written), seconds,
      static_cast<double>(written) / seconds, cpu, static_cast<double>(written) / cpu,
      static_cast<double>(peak_rss_kib()) / 1024.0);
  return 0;
}
