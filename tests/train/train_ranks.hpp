#pragma once
// Trains every rank of a run as threads of this process, over in-memory communicators
// (rank_threads.hpp), and keeps what each rank reached and recorded.
#include <map>
#include <mutex>
#include <vector>

#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"

namespace laconic::testing {

struct RankOutcome {
  train::WorkerResult result;
  std::vector<MetricRecord> records;
};

// Every rank of the run, parameter servers (ranks >= workers) included.
inline std::map<int, RankOutcome> train_ranks(const RunConfig& config, const train::Checkpointing& checkpointing = {}) {
  std::map<int, RankOutcome> out;
  std::mutex mutex;
  const int world = engine::EngineCatalog().world_size(config);
  run_ranks(world, std::chrono::seconds(120), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::WorkerParts parts;
    {
      std::lock_guard<std::mutex> lock(mutex);  // LibTorch's generator is per process
      parts = catalog.build(config, comm.rank());
    }
    train::WorkerResult result;
    if (comm.rank() < config.workers)
      result = train::run_worker(config, std::move(parts), comm, sink, {}, nullptr, checkpointing);
    else
      train::run_server(config, std::move(parts), comm, sink, nullptr, checkpointing);
    std::lock_guard<std::mutex> lock(mutex);
    out[comm.rank()] = {result, sink.records()};
  });
  return out;
}

// Two workers training LeNet-5 on Fashion-MNIST for `steps` steps of 16 examples, one epoch,
// synchronous SGD over allreduce at the catalog's defaults: what a test changes the rest of.
inline RunConfig lenet_test_run(const std::string& name, std::int64_t steps) {
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = name;
  c.dataset = catalog.resolve({"dataset", "fashion_mnist", {}});
  c.model = catalog.resolve({"model", "lenet5", {}});
  c.topology = catalog.resolve({"topology", "allreduce", {}});
  c.batch_size = 16;
  c.max_steps = steps;
  c.epochs = 1;
  c.eval_limit = 200;
  c.workers = 2;
  return c;
}

// What the catalog says of `config` before anything trains: its ConfigError's message, or
// "(accepted)".
inline std::string refusal_of(const RunConfig& config) {
  try {
    engine::EngineCatalog().check_run(config);
    return "(accepted)";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

}  // namespace laconic::testing
