#include <algorithm>
#include <map>
#include <mutex>

#include "engine/catalog.hpp"
#include "engine/compress/topk.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

RunConfig small_run(const std::string& compressor, std::int64_t steps) {
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = compressor;
  c.dataset = catalog.resolve({"dataset", "fashion_mnist", {}});
  c.model = catalog.resolve({"model", "lenet5", {}});
  c.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}});
  c.topology = catalog.resolve({"topology", "allreduce", {}});
  c.schedule = catalog.resolve({"schedule", "synchronous", {}});
  c.compressor = catalog.resolve({"compressor", compressor, {}});
  c.batch_size = 32;
  c.max_steps = steps;
  c.eval_limit = 500;
  c.workers = 2;
  return c;
}

std::vector<double> values(const std::vector<MetricRecord>& records, const std::string& key) {
  std::vector<double> out;
  for (const auto& m : records)
    if (m.key == key) out.push_back(m.value);
  return out;
}

}  // namespace

TEST_CASE("two workers end with bit-identical replicas and count the bytes each step sent",
          "[train][worker][multirank]") {
  constexpr std::int64_t kSteps = 6;
  for (std::string compressor : {"none", "topk"}) {
    const auto config = small_run(compressor, kSteps);
    std::map<int, train::WorkerResult> results;
    std::map<int, std::vector<MetricRecord>> records;
    std::mutex mutex;
    testing::run_ranks(2, std::chrono::seconds(60), [&](comm::Communicator& comm) {
      engine::EngineCatalog catalog;
      MemorySink sink;
      train::WorkerParts parts;
      {
        // LibTorch's generator is global to the process; ranks here are threads, not
        // processes, so they must not seed and draw initial weights at the same time.
        std::lock_guard<std::mutex> lock(mutex);
        parts = catalog.build(config);
      }
      auto result = train::run_worker(config, std::move(parts), comm, sink);
      std::lock_guard<std::mutex> lock(mutex);
      results[comm.rank()] = result;
      records[comm.rank()] = sink.records();
    });
    CHECK(results[0].parameter_hash == results[1].parameter_hash);
    CHECK(results[0].steps == kSteps);
    CHECK(results[0].final_test_accuracy >= 0.0);
    CHECK(values(records[1], "test_accuracy").empty());  // rank 0 evaluates
    const std::size_t n = 61706;                          // LeNet-5's parameters
    for (int rank : {0, 1}) {
      auto sent = values(records[rank], "bytes_sent");
      auto dense = values(records[rank], "bytes_dense");
      REQUIRE(sent.size() == kSteps);
      REQUIRE(values(records[rank], "train_loss").size() == kSteps);
      for (std::size_t i = 0; i < sent.size(); ++i) {
        CHECK(dense[i] == 4.0 * n);  // ring allreduce over 2 ranks: half out, half back
        if (compressor == "none") {
          CHECK(sent[i] == dense[i]);
        } else {
          // Ring allgatherv over 2 ranks: the 8-byte size, then the packed payload.
          CHECK(sent[i] == 8 + compress::topk_payload_bytes(compress::topk_count(0.01, n)));
        }
        // The payload itself: 4 bytes per element dense, Top-k's formula otherwise.
        CHECK(values(records[rank], "payload_bytes")[i] ==
              (compressor == "none" ? 4.0 * n
                                    : compress::topk_payload_bytes(compress::topk_count(0.01, n))));
      }
    }
  }
}

TEST_CASE("a few steps of LeNet-5 on Fashion-MNIST reduce the training loss",
          "[train][worker]") {
  auto config = small_run("none", 60);
  config.workers = 1;
  std::vector<MetricRecord> records;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::run_worker(config, catalog.build(config), comm, sink);
    records = sink.records();
  });
  auto loss = values(records, "train_loss");
  REQUIRE(loss.size() == 60);
  auto mean = [](auto begin, auto end) {
    double s = 0;
    for (auto it = begin; it != end; ++it) s += *it;
    return s / static_cast<double>(end - begin);
  };
  CHECK(mean(loss.end() - 10, loss.end()) < 0.75 * mean(loss.begin(), loss.begin() + 10));
}
