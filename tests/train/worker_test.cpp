#include <algorithm>
#include <map>
#include <mutex>

#include "engine/catalog.hpp"
#include "engine/compress/powersgd.hpp"
#include "engine/compress/topk.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"
#include "engine/core/metric_keys.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

RunConfig worker_small_run(const std::string& compressor, std::int64_t steps) {
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
  for (std::string compressor : {"none", "topk", "powersgd"}) {
    const auto config = worker_small_run(compressor, kSteps);
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
        parts = catalog.build(config, comm.rank());
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
    const std::size_t n = 61706;                         // LeNet-5's parameters
    std::vector<compress::LayerShape> shapes;
    for (const auto& p : engine::EngineCatalog().build(config, 0).model->parameters())
      shapes.push_back({p.sizes().begin(), p.sizes().end()});
    // PowerSGD at rank 2: P and Q of each weight matrix, biases dense.
    const double powersgd_bytes = 4.0 * compress::powersgd_floats(shapes, 2);
    CHECK(powersgd_bytes < 0.2 * 4.0 * n);
    for (int rank : {0, 1}) {
      auto sent = values(records[rank], keys::kBytesSent);
      auto dense = values(records[rank], "bytes_dense");
      REQUIRE(sent.size() == kSteps);
      REQUIRE(values(records[rank], "train_loss").size() == kSteps);
      for (std::size_t i = 0; i < sent.size(); ++i) {
        CHECK(dense[i] == 4.0 * n);  // ring allreduce over 2 ranks: half out, half back
        if (compressor == "none") {
          CHECK(sent[i] == dense[i]);
        } else if (compressor == "powersgd") {
          // Two ring allreduces over 2 ranks: each rank sends each buffer once.
          CHECK(sent[i] == powersgd_bytes);
        } else {
          // Ring allgatherv over 2 ranks: the 8-byte size, then the packed payload.
          CHECK(sent[i] == 8 + compress::topk_payload_bytes(compress::topk_count(0.01, n)));
        }
        // The payload itself: 4 bytes per element dense, Top-k's formula otherwise.
        CHECK(values(records[rank], "payload_bytes")[i] ==
              (compressor == "none"       ? 4.0 * n
               : compressor == "powersgd" ? powersgd_bytes
                                          : compress::topk_payload_bytes(compress::topk_count(0.01, n))));
      }
    }
  }
}

TEST_CASE("a few steps of LeNet-5 on Fashion-MNIST reduce the training loss", "[train][worker]") {
  auto config = worker_small_run("none", 60);
  config.workers = 1;
  std::vector<MetricRecord> records;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::run_worker(config, catalog.build(config, comm.rank()), comm, sink);
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

namespace {

struct RankRecords {
  std::map<int, train::WorkerResult> results;
  std::map<int, std::vector<MetricRecord>> records;
};

RankRecords train_worker_ranks(const RunConfig& config, RunCallbacks* callbacks = nullptr) {
  RankRecords out;
  std::mutex mutex;
  testing::run_ranks(engine::EngineCatalog().world_size(config), std::chrono::seconds(60),
                     [&](comm::Communicator& comm) {
                       engine::EngineCatalog catalog;
                       MemorySink sink;
                       train::WorkerParts parts;
                       {
                         std::lock_guard<std::mutex> lock(mutex);  // LibTorch's global generator (see above)
                         parts = catalog.build(config, comm.rank());
                       }
                       train::WorkerResult result;
                       if (comm.rank() < config.workers)
                         result = train::run_worker(config, std::move(parts), comm, sink, {}, callbacks);
                       else
                         train::run_server(config, std::move(parts), comm, sink, callbacks);
                       std::lock_guard<std::mutex> lock(mutex);
                       out.results[comm.rank()] = result;
                       out.records[comm.rank()] = sink.records();
                     });
  return out;
}

}  // namespace

TEST_CASE("local SGD with period 1 is synchronous SGD, and its replicas stay identical", "[train][worker][multirank]") {
  auto sync = worker_small_run("none", 8);
  auto local = sync;
  engine::EngineCatalog catalog;
  local.schedule = catalog.resolve({"schedule", "local_sgd", {{"period", std::int64_t{1}}}});
  const auto a = train_worker_ranks(sync);
  const auto b = train_worker_ranks(local);
  CHECK(b.results.at(0).parameter_hash == b.results.at(1).parameter_hash);
  const auto loss_a = values(a.records.at(0), "train_loss");
  const auto loss_b = values(b.records.at(0), "train_loss");
  REQUIRE(loss_a.size() == 8);
  REQUIRE(loss_b.size() == 8);
  // Averaging updates instead of gradients differs by float rounding only (SGD with momentum
  // is linear in the gradient).
  for (std::size_t i = 0; i < loss_a.size(); ++i) CHECK(loss_b[i] == Approx(loss_a[i]).epsilon(1e-4));
  CHECK(values(b.records.at(0), keys::kBytesSent) == values(a.records.at(0), keys::kBytesSent));

  // Period 4: bytes only on every 4th step, replicas equal after the last average.
  local.schedule = catalog.resolve({"schedule", "local_sgd", {{"period", std::int64_t{4}}}});
  const auto c = train_worker_ranks(local);
  const auto sent = values(c.records.at(1), keys::kBytesSent);
  REQUIRE(sent.size() == 8);
  for (std::size_t i = 0; i < sent.size(); ++i) CHECK((sent[i] > 0) == (i % 4 == 3));
  CHECK(c.results.at(0).parameter_hash == c.results.at(1).parameter_hash);
}

TEST_CASE("gossip between two workers mixes their models and records the consensus distance",
          "[train][worker][multirank]") {
  auto config = worker_small_run("none", 5);
  engine::EngineCatalog catalog;
  config.topology = catalog.resolve({"topology", "gossip", {{"neighbours", std::int64_t{1}}}});
  const auto out = train_worker_ranks(config);
  const auto distance = values(out.records.at(0), "consensus_distance");
  REQUIRE(distance.size() == 1);
  // With two workers and one neighbour each, mixing is the exact mean: replicas coincide up to
  // the rounding of (a + b) / 2 computed in two orders.
  CHECK(distance[0] < 1e-6);
  const auto sent = values(out.records.at(0), keys::kBytesSent);
  for (double s : sent) CHECK(s == 4.0 * 61706);
}

TEST_CASE(
    "a parameter server pulling gradients or weights trains like allreduce, and its "
    "workers stay identical",
    "[train][worker][multirank][ps]") {
  constexpr std::int64_t kSteps = 6;
  const auto reference = train_worker_ranks(worker_small_run("none", kSteps));
  const auto loss_ref = values(reference.records.at(0), "train_loss");
  engine::EngineCatalog catalog;
  for (const std::string pull : {"gradients", "weights"}) {
    INFO("pull = " << pull);
    auto config = worker_small_run("none", kSteps);
    config.topology = catalog.resolve({"topology", "parameter_server", {{"pull", pull}}});
    REQUIRE(catalog.world_size(config) == 3);
    // Two servers, each with half of the parameters: the same training.
    auto sharded = config;
    sharded.topology =
        catalog.resolve({"topology", "parameter_server", {{"pull", pull}, {"servers", std::int64_t{2}}}});
    REQUIRE(catalog.world_size(sharded) == 4);
    const auto two = train_worker_ranks(sharded);
    CHECK(two.results.at(0).parameter_hash == two.results.at(1).parameter_hash);
    const auto loss_two = values(two.records.at(0), "train_loss");
    REQUIRE(loss_two.size() == kSteps);
    for (std::size_t i = 0; i < loss_two.size(); ++i) CHECK(loss_two[i] == Approx(loss_ref[i]).epsilon(1e-4));
    // Each server sends the header and its half back to both workers.
    const std::size_t half = 61706 / 2;
    for (int server : {2, 3})
      for (double sent : values(two.records.at(server), keys::kBytesSent)) CHECK(sent == 2 * (24 + 4.0 * half));
    const auto out = train_worker_ranks(config);
    CHECK(out.results.at(0).parameter_hash == out.results.at(1).parameter_hash);
    const auto loss = values(out.records.at(0), "train_loss");
    REQUIRE(loss.size() == kSteps);
    // The same mean gradient, stepped by the workers or by the server: float rounding apart.
    for (std::size_t i = 0; i < loss.size(); ++i) CHECK(loss[i] == Approx(loss_ref[i]).epsilon(1e-4));
    const std::size_t n = 61706;
    for (double sent : values(out.records.at(1), keys::kBytesSent)) CHECK(sent == 8 + 4.0 * n);
    // The server (rank 2) records its rounds: the fan-out of a header and n floats per worker.
    const auto server_sent = values(out.records.at(2), keys::kBytesSent);
    REQUIRE(server_sent.size() == kSteps);
    for (double sent : server_sent) CHECK(sent == 2 * (24 + 4.0 * n));
  }
}

TEST_CASE("a parameter server compressing both ways trains LeNet-5 on Fashion-MNIST",
          "[train][worker][multirank][ps]") {
  auto config = worker_small_run("topk", 80);
  engine::EngineCatalog catalog;
  config.compressor = catalog.resolve({"compressor", "topk", {{"ratio", 0.05}}});
  config.topology =
      catalog.resolve({"topology",
                       "parameter_server",
                       {{"pull", std::string("gradients")}, {"compress_pull", true}, {"servers", std::int64_t{2}}}});
  const auto out = train_worker_ranks(config);
  CHECK(out.results.at(0).parameter_hash == out.results.at(1).parameter_hash);
  const auto loss = values(out.records.at(0), "train_loss");
  REQUIRE(loss.size() == 80);
  auto mean = [](auto begin, auto end) {
    double s = 0;
    for (auto it = begin; it != end; ++it) s += *it;
    return s / static_cast<double>(end - begin);
  };
  CHECK(mean(loss.end() - 10, loss.end()) < 0.75 * mean(loss.begin(), loss.begin() + 10));
  // Both directions compressed, over two servers of half the parameters each: a worker
  // pushes 8 + Top-k's payload of each half; each server pulls back Top-k of its half's mean.
  const std::size_t half = 61706 / 2, k = compress::topk_count(0.05, half);
  for (double sent : values(out.records.at(0), keys::kBytesSent)) CHECK(sent == 2 * (8 + compress::topk_payload_bytes(k)));
  for (int server : {2, 3})
    for (double sent : values(out.records.at(server), keys::kBytesSent))
      CHECK(sent == 2 * (24 + compress::topk_payload_bytes(k)));
}

TEST_CASE("parameter_server options and compressors it cannot serve are refused by name", "[train][ps]") {
  engine::EngineCatalog catalog;
  CHECK_THROWS_WITH(catalog.resolve({"topology", "parameter_server", {{"servers", std::int64_t{0}}}}),
                    "parameter_server.servers must be in [1, 64], got 0");
  CHECK_THROWS_WITH(catalog.resolve({"topology", "parameter_server", {{"pull", std::string("models")}}}),
                    "parameter_server.pull must be one of \"weights\", \"gradients\", got \"models\"");
  auto config = worker_small_run("randomk", 1);
  config.topology = catalog.resolve({"topology", "parameter_server", {}});
  CHECK_THROWS_WITH(catalog.build(config, 0), Catch::StartsWith("parameter_server cannot decode randomk's payloads"));
  // The same for a chain whose first part is a shared-seed sparsifier.
  config.compressor = catalog.resolve({"compressor",
                                       "chain",
                                       {{"first", nested(ComponentSpec{"compressor", "block_randomk", {}})},
                                        {"second", nested(ComponentSpec{"compressor", "fp16", {}})}}});
  CHECK_THROWS_WITH(catalog.build(config, 0), Catch::StartsWith("parameter_server cannot decode chain's payloads"));
  config = worker_small_run("none", 1);
  config.topology = catalog.resolve({"topology", "parameter_server", {}});
  config.schedule = catalog.resolve({"schedule", "local_sgd", {}});
  CHECK_THROWS_WITH(catalog.build(config, 0), Catch::Contains("use parameter_server { pull = "));
  CHECK_THROWS_WITH(catalog.check_run(config), Catch::Contains("use parameter_server { pull = "));
}

TEST_CASE(
    "stale-synchronous SGD never applies an update computed more than s steps ahead; "
    "async with a straggler does",
    "[train][worker][multirank][ps]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("none", 24);
  config.topology = catalog.resolve({"topology", "parameter_server", {}});
  const auto straggling = [&](const std::string& name, std::map<std::string, Value> fields) {
    fields["stragglers"] = std::int64_t{1};
    fields["straggler_delay"] = 0.03;
    return catalog.resolve({"schedule", name, std::move(fields)});
  };
  auto max_of = [](const std::vector<MetricRecord>& records, const std::string& key, int worker) {
    double m = -1;
    for (const auto& r : records)
      if (r.key == key && r.worker == worker) m = std::max(m, r.value);
    return m;
  };
  config.schedule = straggling("stale_sync", {{"staleness", std::int64_t{1}}});
  const auto bounded = train_worker_ranks(config);
  const auto& server = bounded.records.at(2);
  REQUIRE(values(server, "staleness").size() == 48);  // every push of both workers
  CHECK(max_of(server, "staleness", 0) <= 1);
  CHECK(max_of(server, "staleness", 1) <= 1);
  CHECK(max_of(server, "staleness", 0) == 1);   // the fast worker does run ahead, by one
  CHECK(max_of(server, "update_lag", 1) >= 1);  // the straggler computes on stale weights
  const auto slow = values(bounded.records.at(1), "time_delay");
  REQUIRE(slow.size() == 24);
  for (double d : slow) CHECK(d == Approx(0.03));
  for (double d : values(bounded.records.at(0), "time_delay")) CHECK(d == 0.0);

  config.schedule = straggling("async", {});
  const auto unbounded = train_worker_ranks(config);
  CHECK(max_of(unbounded.records.at(2), "staleness", 0) > 1);
  CHECK(values(unbounded.records.at(0), "train_loss").size() == 24);

  auto allreduce = worker_small_run("none", 1);
  allreduce.schedule = catalog.resolve({"schedule", "async", {}});
  const std::string refusal =
      "schedule async needs topology = parameter_server { pull = \"weights\" }, whose server steps its "
      "optimizer with each push on its own; got ";
  CHECK_THROWS_WITH(catalog.build(allreduce, 0), refusal + "allreduce");
  CHECK_THROWS_WITH(catalog.check_run(allreduce), refusal + "allreduce");  // asked without building
  auto averaging = config;
  averaging.topology = catalog.resolve({"topology", "parameter_server", {{"pull", std::string("gradients")}}});
  CHECK_THROWS_WITH(catalog.check_run(averaging), refusal + "parameter_server");
}

TEST_CASE("the learning rate a worker records is the one its schedule sets", "[train][worker][lr]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("none", 3);
  config.workers = 1;
  config.epochs = 2;
  config.lr_schedule =
      catalog.resolve({"lr_schedule", "step_decay", {{"factor", 0.5}, {"warmup_steps", std::int64_t{2}}}});
  std::vector<MetricRecord> records;
  testing::run_ranks(1, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    MemorySink sink;
    train::run_worker(config, catalog.build(config, comm.rank()), comm, sink);
    records = sink.records();
  });
  // lr 0.05: warm-up 1/2, 2/2 over steps 0-1, then epoch 1 halves it.
  CHECK(values(records, "lr") == std::vector<double>{0.025, 0.05, 0.05, 0.025, 0.025, 0.025});
}

TEST_CASE("an early-stopping run ends on every worker after the same epoch", "[train][worker][multirank][stopping]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("none", 2);
  config.epochs = 6;
  // min_delta 1: no epoch can improve test accuracy by that much, so it stops after epoch 1.
  config.stopping =
      catalog.resolve({"stopping", "early_stopping", {{"patience", std::int64_t{1}}, {"min_delta", 1.0}}});
  const auto out = train_worker_ranks(config);
  CHECK(out.results.at(0).steps == 4);
  CHECK(out.results.at(1).steps == 4);
  CHECK(values(out.records.at(0), "stopped_early") == std::vector<double>{1.0});
  CHECK(values(out.records.at(0), "test_accuracy").size() == 2);
}

namespace {

/// The experiment file's functions, as workers call them: "period" is 2 for the first four
/// steps, then 3; "ratio" is 0.1 for even steps and 0.02 for odd ones.
struct StepFunctions : RunCallbacks {
  bool has(const std::string&) const override { return false; }
  double learning_rate(std::int64_t, std::int64_t) override { return 0; }
  bool on_epoch_end(std::int64_t, const std::map<std::string, double>&) override { return false; }
  double step_function(const std::string& id, std::int64_t, std::int64_t step) override {
    if (id == "period") return step < 4 ? 2 : 3;
    if (id == "ratio") return step % 2 == 0 ? 0.1 : 0.02;
    throw ConfigError("no function " + id);
  }
};

}  // namespace

TEST_CASE(
    "a local SGD period given as a function averages once the steps since the last "
    "average reach it",
    "[train][worker][multirank][step]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("none", 12);
  config.schedule = catalog.resolve({"schedule", "local_sgd", {{"period", StepFunction{"period"}}}});
  StepFunctions functions;
  const auto out = train_worker_ranks(config, &functions);
  const auto sent = values(out.records.at(0), keys::kBytesSent);
  REQUIRE(sent.size() == 12);
  // Periods 2, 2 (steps 0-3), then 3, 3, 3 (steps 4-12): averages after steps 1, 3, 6, 9.
  for (std::size_t i = 0; i < sent.size(); ++i) CHECK((sent[i] > 0) == (i == 1 || i == 3 || i == 6 || i == 9));
  // Without the file's functions (a worker that did not load it), the run refuses to guess.
  CHECK_THROWS_WITH(train_worker_ranks(config), Catch::Contains("local_sgd.period is the experiment "
                                                         "file's function period"));
}

TEST_CASE("a topk ratio given as a function sets each step's payload on every worker",
          "[train][worker][multirank][step]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("topk", 6);
  config.compressor = catalog.resolve({"compressor", "topk", {{"ratio", StepFunction{"ratio"}}}});
  StepFunctions functions;
  const auto out = train_worker_ranks(config, &functions);
  for (int rank : {0, 1}) {
    const auto payload = values(out.records.at(rank), "payload_bytes");
    REQUIRE(payload.size() == 6);
    for (std::size_t i = 0; i < payload.size(); ++i)
      CHECK(payload[i] == compress::topk_payload_bytes(compress::topk_count(i % 2 == 0 ? 0.1 : 0.02, 61706)));
  }
  CHECK(out.results.at(0).parameter_hash == out.results.at(1).parameter_hash);
}

TEST_CASE(
    "async with compressed pulls trains; each reply is a Top-k payload of the change "
    "since that worker's last reply",
    "[train][worker][multirank][ps]") {
  engine::EngineCatalog catalog;
  auto config = worker_small_run("topk", 150);
  config.compressor = catalog.resolve({"compressor", "topk", {{"ratio", 0.05}}});
  config.topology = catalog.resolve({"topology", "parameter_server", {{"compress_pull", true}}});
  config.schedule = catalog.resolve({"schedule", "async", {}});
  // Without momentum: asynchronous updates arrive stale, and momentum amplifies them.
  config.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.1}, {"momentum", 0.0}}});
  const auto out = train_worker_ranks(config);
  const auto loss = values(out.records.at(0), "train_loss");
  REQUIRE(loss.size() == 150);
  auto mean = [](auto begin, auto end) {
    double s = 0;
    for (auto it = begin; it != end; ++it) s += *it;
    return s / static_cast<double>(end - begin);
  };
  INFO("first 10 steps " << mean(loss.begin(), loss.begin() + 10) << ", last 10 " << mean(loss.end() - 10, loss.end()));
  CHECK(mean(loss.end() - 10, loss.end()) < 0.6 * mean(loss.begin(), loss.begin() + 10));
  // 300 pushes, 300 replies of (header, Top-k 5% of all 61,706 parameters).
  double server_sent = 0;
  for (double s : values(out.records.at(2), keys::kBytesSent)) server_sent += s;
  CHECK(server_sent == 300.0 * (24 + compress::topk_payload_bytes(compress::topk_count(0.05, 61706))));
}
