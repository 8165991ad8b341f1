// placement = threads(): the same run as a process per rank, bit for bit. Every rank a thread
// exchanging through memory (engine/thread_ranks.hpp) against every rank with its own Gloo
// communicator (what a process per rank runs; here one thread each, as the other multi-rank
// tests do): the same losses, accuracies, payloads, bytes and messages, step by step and rank by
// rank, wherever the order of every operation is fixed.
#include <deque>
#include <map>
#include <set>
#include <mutex>
#include <tuple>

#include "engine/catalog.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/thread_ranks.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

struct Case {
  int workers;
  ComponentSpec topology, compressor, schedule;
};

RunConfig run_of(const engine::EngineCatalog& catalog, const Case& c) {
  RunConfig run;
  run.experiment = "placement";
  run.name = "case";
  run.dataset = catalog.resolve(
      {"dataset",
       "synthetic",
       {{"shape", std::vector<std::int64_t>{1, 8, 8}}, {"n", std::int64_t{512}}, {"test_n", std::int64_t{64}}}});
  run.model = catalog.resolve({"model", "mlp", {{"sizes", std::vector<std::int64_t>{64, 32, 10}}}});
  run.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.1}, {"momentum", 0.9}}});
  run.topology = catalog.resolve(c.topology);
  run.schedule = catalog.resolve(c.schedule);
  run.compressor = catalog.resolve(c.compressor);
  run.batch_size = 8;
  run.max_steps = 6;
  run.epochs = 2;
  run.workers = c.workers;
  run.timeout = 30;
  return run;
}

// What does not depend on time: (key, step, worker) -> value.
using Results = std::map<std::tuple<std::string, std::int64_t, int>, double>;

Results deterministic(const std::vector<MetricRecord>& records) {
  static const std::set<std::string> kKeys = {
      keys::kTrainLoss,   keys::kEpochTrainLoss, keys::kTestAccuracy, keys::kTestLoss,  keys::kPayloadBytes,
      keys::kBytesSent,   keys::kBytesReceived,  keys::kBytesDense,   keys::kMessages,  keys::kLinkBytes,
      keys::kLr,          keys::kModelParameters};
  Results out;
  for (const MetricRecord& m : records)
    if (kKeys.count(m.key)) out[{m.key, m.step, m.worker}] = m.value;
  return out;
}

// A process per rank: its own communicator over Gloo, its own replica built from the seed.
Results over_processes(const engine::EngineCatalog& catalog, const RunConfig& run) {
  MemorySink sink;
  std::mutex mutex;  // LibTorch's generator is the process's: one replica at a time
  testing::run_ranks(catalog.world_size(run), std::chrono::seconds(60), [&](comm::Communicator& comm) {
    train::WorkerParts parts;
    {
      std::lock_guard<std::mutex> lock(mutex);
      parts = catalog.build(run, comm.rank());
    }
    if (comm.rank() < run.workers)
      train::run_worker(run, std::move(parts), comm, sink);
    else
      train::run_server(run, std::move(parts), comm, sink);
  });
  return deterministic(sink.records());
}

Results over_threads(const engine::EngineCatalog& catalog, const RunConfig& run) {
  MemorySink sink;
  std::deque<Liveness> liveness(static_cast<std::size_t>(catalog.world_size(run)));
  engine::train_thread_ranks(catalog, run, nullptr, {sink, liveness, {}});
  return deterministic(sink.records());
}

void check_same(const engine::EngineCatalog& catalog, const Case& c) {
  const RunConfig run = run_of(catalog, c);
  INFO(c.workers << " workers, " << c.topology.to_json().dump() << ", " << c.compressor.to_json().dump() << ", "
                 << c.schedule.name);
  try {
    catalog.check_run(run);
    (void)catalog.build(run, 0);
  } catch (const ConfigError& e) {
    return;  // a combination laconic refuses under either placement
  }
  const Results processes = over_processes(catalog, run);
  const Results threads = over_threads(catalog, run);
  REQUIRE(processes.size() == threads.size());
  REQUIRE(processes.count({keys::kTrainLoss, 0, 0}) == 1);
  std::size_t differing = 0;
  for (const auto& [at, value] : processes) {
    const auto it = threads.find(at);
    if (it == threads.end() || it->second != value) {
      if (differing++ < 5)
        UNSCOPED_INFO(std::get<0>(at) << " at step " << std::get<1>(at) << ", worker " << std::get<2>(at) << ": "
                                      << value << " with a process per rank, "
                                      << (it == threads.end() ? std::string("missing") : std::to_string(it->second))
                                      << " with threads");
    }
  }
  CHECK(differing == 0);
}

}  // namespace

TEST_CASE("threads placement gives what a process per rank gives, bit for bit, over every synchronous topology",
          "[train][placement][multirank]") {
  const engine::EngineCatalog catalog;
  const int workers = GENERATE(2, 4);
  const auto compressor = GENERATE(as<ComponentSpec>{}, ComponentSpec{"compressor", "none", {}},
                                   ComponentSpec{"compressor", "topk", {{"ratio", 0.05}}},
                                   ComponentSpec{"compressor", "qsgd", {}}, ComponentSpec{"compressor", "powersgd", {}});
  const auto topology = GENERATE(as<ComponentSpec>{}, ComponentSpec{"topology", "allreduce", {}},
                                 ComponentSpec{"topology", "allreduce", {{"algorithm", std::string("halving_doubling")}}},
                                 ComponentSpec{"topology", "allgather", {}},
                                 ComponentSpec{"topology", "parameter_server", {}},
                                 ComponentSpec{"topology", "gossip", {{"neighbours", std::int64_t{1}}}});
  check_same(catalog, {workers, topology, compressor, {"schedule", "synchronous", {}}});
}

TEST_CASE("threads placement gives what a process per rank gives under local SGD", "[train][placement][multirank]") {
  const engine::EngineCatalog catalog;
  const int workers = GENERATE(2, 4);
  const auto compressor = GENERATE(as<ComponentSpec>{}, ComponentSpec{"compressor", "none", {}},
                                   ComponentSpec{"compressor", "topk", {{"ratio", 0.05}}});
  check_same(catalog, {workers, {"topology", "allreduce", {}}, compressor, {"schedule", "local_sgd", {{"period", std::int64_t{3}}}}});
}

TEST_CASE("thread ranks report the failure that stopped them, not the waits it broke", "[train][placement][multirank]") {
  const engine::EngineCatalog catalog;
  RunConfig run = run_of(catalog, {4, {"topology", "allreduce", {}}, {"compressor", "none", {}}, {"schedule", "synchronous", {}}});
  run.divergence_factor = 1e-9;  // the second step's loss is above it: every rank diverges at once
  MemorySink sink;
  std::deque<Liveness> liveness(4);
  CHECK_THROWS_AS(engine::train_thread_ranks(catalog, run, nullptr, {sink, liveness, {}}), DivergedError);
}
