// Training with allreduce { overlap = true }: backward's hooks feed the buckets, and the
// replicas come out exactly as with the exchange after backward for element-wise compressors;
// compressors that cannot be cut into buckets, and schedules without a gradient exchange after
// backward, are refused before training.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "engine/catalog.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/core/error.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

RunConfig lenet_run(const ComponentSpec& compressor, bool overlap) {
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = compressor.name;
  c.dataset = catalog.resolve({"dataset", "fashion_mnist", {}});
  c.model = catalog.resolve({"model", "lenet5", {}});
  c.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}});
  // Small buckets, so that LeNet-5's 247 kB make several (DDP's 1 MiB would make one).
  c.topology = catalog.resolve(
      {"topology", "allreduce", {{"overlap", overlap}, {"first_bucket_mb", 0.01}, {"bucket_mb", 0.05}}});
  c.schedule = catalog.resolve({"schedule", "synchronous", {}});
  c.compressor = catalog.resolve(compressor);
  c.batch_size = 32;
  c.max_steps = 5;
  c.eval_limit = 200;
  c.workers = 2;
  return c;
}

struct Trained {
  std::map<int, train::WorkerResult> results;
  std::map<int, std::vector<MetricRecord>> records;
};

Trained train_two(const RunConfig& config) {
  Trained out;
  std::mutex mutex;
  testing::run_ranks(2, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::WorkerParts parts;
    {
      std::lock_guard<std::mutex> lock(mutex);  // LibTorch's generator is per process
      parts = catalog.build(config, comm.rank());
    }
    auto result = train::run_worker(config, std::move(parts), comm, sink);
    std::lock_guard<std::mutex> lock(mutex);
    out.results[comm.rank()] = result;
    out.records[comm.rank()] = sink.records();
  });
  return out;
}

std::vector<double> values(const std::vector<MetricRecord>& records, const std::string& key) {
  std::vector<double> out;
  for (const auto& m : records)
    if (m.key == key) out.push_back(m.value);
  return out;
}

}  // namespace

TEST_CASE("an overlapped exchange trains the replicas the exchange after backward trains",
          "[train][overlap][multirank]") {
  for (std::string name : {"none", "fp16"}) {
    INFO(name);
    const ComponentSpec compressor{"compressor", name, {}};
    const auto after = train_two(lenet_run(compressor, false));
    const auto overlapped = train_two(lenet_run(compressor, true));
    // Two workers: every sum is a + b in either order, so bucket by bucket is bit for bit.
    CHECK(overlapped.results.at(0).parameter_hash == after.results.at(0).parameter_hash);
    CHECK(overlapped.results.at(1).parameter_hash == after.results.at(0).parameter_hash);
    CHECK(values(overlapped.records.at(0), "train_loss") == values(after.records.at(0), "train_loss"));
    // fp16's payload starts with its length (4 bytes): one per bucket, LeNet-5 has 10 layers.
    const auto bytes = values(overlapped.records.at(0), "payload_bytes");
    const auto whole = values(after.records.at(0), "payload_bytes");
    REQUIRE(bytes.size() == whole.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (name == "none") CHECK(bytes[i] == whole[i]);
      if (name == "fp16")
        CHECK((bytes[i] - whole[i] > 0 && bytes[i] - whole[i] < 40 && static_cast<int>(bytes[i] - whole[i]) % 4 == 0));
    }
    // Each step says how much of its exchange was hidden behind backward; the other never does.
    const auto hidden = values(overlapped.records.at(0), "time_overlapped");
    CHECK(hidden.size() == 5);
    for (double h : hidden) CHECK(h >= 0);
    CHECK(values(after.records.at(0), "time_overlapped").empty());
    CHECK(values(overlapped.records.at(1), "time_wait").size() == 5);
  }
}

TEST_CASE("PowerSGD overlaps bucket by bucket with the payload of the whole exchange", "[train][overlap][multirank]") {
  const ComponentSpec compressor{"compressor", "powersgd", {{"rank", std::int64_t{2}}}};
  const auto after = train_two(lenet_run(compressor, false));
  const auto overlapped = train_two(lenet_run(compressor, true));
  CHECK(overlapped.results.at(0).parameter_hash == overlapped.results.at(1).parameter_hash);
  // Per layer either way: the same P and Q, so the same bytes (only the random start of Q
  // differs, seeded per bucket).
  CHECK(values(overlapped.records.at(0), "payload_bytes") == values(after.records.at(0), "payload_bytes"));
  for (double loss : values(overlapped.records.at(0), "train_loss")) CHECK(std::isfinite(loss));
}

TEST_CASE(
    "overlap refuses compressors that cannot be cut into buckets, and schedules without an exchange after backward",
    "[train][overlap]") {
  engine::EngineCatalog catalog;
  auto refusal = [&](const RunConfig& config) -> std::string {
    try {
      catalog.check_run(config);
      catalog.build(config, 0);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(refusal(lenet_run({"compressor", "topk", {}}, true)),
             Catch::Contains("topk over a bucket is not topk over the whole gradient"));
  CHECK_THAT(refusal(lenet_run({"compressor", "qsgd", {}}, true)), Catch::Contains("overlap = false"));
  // The compressors the refusal offers are the registry's layer-wise ones, each of which overlap runs.
  const auto separable = compress::layer_separable_compressors(compress::builtin_compressors());
  std::string listed;
  for (const std::string& name : separable) listed += name + ", ";
  CHECK_THAT(refusal(lenet_run({"compressor", "topk", {}}, true)),
             Catch::Contains("(" + listed + "or any with scope = \"layer\")"));
  for (const char* expected : {"none", "fp16", "bf16", "signsgd", "signum", "powersgd"})
    CHECK(std::find(separable.begin(), separable.end(), expected) != separable.end());
  CHECK(std::find(separable.begin(), separable.end(), "topk") == separable.end());
  for (const std::string& name : separable) {
    INFO(name);
    CHECK(refusal(lenet_run({"compressor", name, {}}, true)).empty());
  }
  CHECK(refusal(lenet_run({"compressor", "topk", {{"scope", std::string("layer")}}}, true)).empty());
  CHECK(refusal(lenet_run({"compressor", "topk", {}}, false)).empty());
  auto local = lenet_run({"compressor", "none", {}}, true);
  local.schedule = catalog.resolve({"schedule", "local_sgd", {}});
  CHECK_THAT(refusal(local), Catch::Contains("overlap = true } needs schedule = synchronous"));
}
