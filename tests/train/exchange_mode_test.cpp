// exchange = "gradient" and "update" (docs/compressors.md, "What is exchanged"): each mode's
// equations, written plainly below on std::vector<float>, against laconic's optimizer,
// compressor (Top-k with error feedback) and allreduce on 2 ranks for the same gradients, with
// weight decay, momentum, Nesterov and a learning rate that changes every step; and whole runs:
// "update" with no compression is "gradient" for plain SGD and for SGD with momentum.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>

#include "engine/catalog.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/topology/builtin.hpp"
#include "engine/train/optim/sgd.hpp"
#include "engine/train/worker.hpp"
#include "rank_threads.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

constexpr int kWorkers = 2;
constexpr std::size_t kSize = 40;  // parameters: a 5x6 "weight" and a 10-element "bias"
constexpr int kSteps = 12;
constexpr double kRatio = 0.2;  // Top-k keeps ceil(0.2 * 40) = 8 of 40

struct Setting {
  double momentum, weight_decay;
  bool nesterov;
};

// The gradient worker w sees at step t, and the rate of step t (a schedule that moves).
float gradient_at(int w, int t, std::size_t i) {
  return static_cast<float>(std::sin(0.7 * static_cast<double>(i) + 1.3 * t + 2.1 * w) * (1 + 0.1 * t));
}
double lr_at(int t) { return 0.05 * (1.0 - 0.05 * t); }

std::vector<float> initial_weights() {
  std::vector<float> x(kSize);
  for (std::size_t i = 0; i < kSize; ++i) x[i] = static_cast<float>(std::cos(0.3 * static_cast<double>(i)));
  return x;
}

// Top-k with error feedback as its paper states it: p = v + e; send the k entries of largest
// |p|; e = p - sent.
std::vector<float> topk_with_feedback(const std::vector<float>& v, std::vector<float>& e) {
  std::vector<float> p(v.size()), sent(v.size(), 0.0f);
  for (std::size_t i = 0; i < v.size(); ++i) p[i] = v[i] + e[i];
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return std::fabs(p[a]) > std::fabs(p[b]); });
  const auto k = static_cast<std::size_t>(std::ceil(kRatio * static_cast<double>(v.size())));
  for (std::size_t j = 0; j < k; ++j) sent[order[j]] = p[order[j]];
  for (std::size_t i = 0; i < v.size(); ++i) e[i] = p[i] - sent[i];
  return sent;
}

// The reference: both workers' equations, step by step, in float32.
std::vector<float> reference(const std::string& exchange, const Setting& s) {
  std::vector<float> x = initial_weights();
  std::vector<std::vector<float>> e(kWorkers, std::vector<float>(kSize, 0.0f)),
      b(kWorkers, std::vector<float>(kSize, 0.0f));
  std::vector<float> b_avg(kSize, 0.0f);
  const auto m = static_cast<float>(s.momentum), wd = static_cast<float>(s.weight_decay);
  for (int t = 0; t < kSteps; ++t) {
    const auto lr = static_cast<float>(lr_at(t));
    std::vector<float> sum(kSize, 0.0f);
    for (int w = 0; w < kWorkers; ++w) {
      std::vector<float> v(kSize);
      for (std::size_t i = 0; i < kSize; ++i) {
        const float g = gradient_at(w, t, i);
        if (exchange == "gradient") {
          v[i] = g;  // compressed as it is; the optimizer acts on the mean
        } else {
          // update: d = g + wd x; b = m b + d; u = lr (nesterov ? d + m b : b)
          const float d = g + wd * x[i];
          b[w][i] = m * b[w][i] + d;
          const float direction = s.momentum > 0 ? (s.nesterov ? d + m * b[w][i] : b[w][i]) : d;
          v[i] = lr * direction;
        }
      }
      const auto sent = topk_with_feedback(v, e[w]);
      for (std::size_t i = 0; i < kSize; ++i) sum[i] += sent[i];
    }
    for (std::size_t i = 0; i < kSize; ++i) {
      const float mean = sum[i] * (1.0f / kWorkers);
      if (exchange == "update") {
        x[i] -= mean;  // the mean update, as it is
        continue;
      }
      // gradient: d = mean + wd x; b = m b + d; x -= lr (nesterov ? d + m b : b)
      const float d = mean + wd * x[i];
      b_avg[i] = m * b_avg[i] + d;
      const float direction = s.momentum > 0 ? (s.nesterov ? d + m * b_avg[i] : b_avg[i]) : d;
      x[i] -= lr * direction;
    }
  }
  return x;
}

// laconic's pieces, composed as the worker composes them for each mode, on 2 ranks.
std::vector<float> laconic_run(const std::string& exchange, const Setting& s) {
  std::vector<std::vector<float>> result(kWorkers);
  testing::run_ranks(kWorkers, std::chrono::seconds(30), [&](comm::Communicator& comm) {
    const auto x0 = initial_weights();
    auto flat_x = torch::from_blob(const_cast<float*>(x0.data()), {static_cast<std::int64_t>(kSize)}).clone();
    std::vector<torch::Tensor> params{flat_x.narrow(0, 0, 30).view({5, 6}).detach().clone().requires_grad_(true),
                                      flat_x.narrow(0, 30, 10).detach().clone().requires_grad_(true)};
    auto flat_grad = torch::zeros({static_cast<std::int64_t>(kSize)});
    params[0].mutable_grad() = flat_grad.narrow(0, 0, 30).view({5, 6});
    params[1].mutable_grad() = flat_grad.narrow(0, 30, 10);
    train::Sgd sgd(train::SgdOptions{0.05, s.momentum, s.weight_decay, s.nesterov});
    auto compressor =
        compress::builtin_compressors().create({"compressor", "topk", {{"ratio", kRatio}, {"error_feedback", true}}});
    auto allreduce = topology::builtin_topologies().create({"topology", "allreduce", {}});
    std::span<float> gradient(flat_grad.data_ptr<float>(), kSize);
    for (int t = 0; t < kSteps; ++t) {
      for (std::size_t i = 0; i < kSize; ++i) gradient[i] = gradient_at(comm.rank(), t, i);
      sgd.set_lr(lr_at(t));
      if (exchange == "update") {
        sgd.compute_update(params);
        allreduce->average(gradient, *compressor, comm);
        torch::NoGradGuard no_grad;
        for (auto& p : params) p.sub_(p.grad());
      } else {
        allreduce->average(gradient, *compressor, comm);
        sgd.step(params);
      }
    }
    std::vector<float> x;
    for (const auto& p : params) {
      auto c = p.detach().contiguous();
      x.insert(x.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    result[static_cast<std::size_t>(comm.rank())] = x;
  });
  CHECK(result[0] == result[1]);  // the replicas stay identical
  return result[0];
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(
        worst, std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1e-3, std::fabs(static_cast<double>(b[i]))));
  return worst;
}

RunConfig small_run(const std::string& exchange, double momentum) {
  engine::EngineCatalog catalog;
  RunConfig c;
  c.experiment = "test";
  c.name = exchange;
  c.dataset = catalog.resolve(
      {"dataset",
       "synthetic",
       {{"shape", std::vector<std::int64_t>{1, 8, 8}}, {"n", std::int64_t{256}}, {"test_n", std::int64_t{64}}}});
  c.model = catalog.resolve({"model", "mlp", {{"sizes", std::vector<std::int64_t>{64, 16, 10}}}});
  c.optimizer = catalog.resolve({"optimizer", "sgd", {{"lr", 0.1}, {"momentum", momentum}}});
  c.topology = catalog.resolve({"topology", "allreduce", {}});
  c.schedule = catalog.resolve({"schedule", "synchronous", {}});
  c.compressor = catalog.resolve({"compressor", "none", {}});
  c.batch_size = 16;
  c.max_steps = 8;
  c.workers = 2;
  c.exchange = exchange == "update" ? Exchange::Update : Exchange::Gradient;
  return c;
}

// Worker 0's training losses of a whole run, step by step.
std::vector<double> losses_of(const RunConfig& config) {
  std::vector<double> losses;
  std::mutex mutex;
  testing::run_ranks(2, std::chrono::seconds(60), [&](comm::Communicator& comm) {
    engine::EngineCatalog catalog;
    MemorySink sink;
    train::WorkerParts parts;
    {
      std::lock_guard<std::mutex> lock(mutex);  // LibTorch's generator is global to the process
      parts = catalog.build(config, comm.rank());
    }
    train::run_worker(config, std::move(parts), comm, sink, {});
    if (comm.rank() != 0) return;
    for (const auto& m : sink.records())
      if (m.key == "train_loss") losses.push_back(m.value);
  });
  return losses;
}

}  // namespace

TEST_CASE("each exchange mode follows its equations: optimizer after the average, or before compressing",
          "[train][exchange]") {
  const Setting settings[] = {{0, 0, false}, {0.9, 0, false}, {0.9, 1e-2, false}, {0.9, 1e-2, true}};
  for (const std::string exchange : {"gradient", "update"})
    for (const auto& s : settings) {
      INFO(exchange << ": momentum " << s.momentum << ", weight decay " << s.weight_decay << ", nesterov "
                    << s.nesterov);
      const auto ours = laconic_run(exchange, s);
      const auto expected = reference(exchange, s);
      // LibTorch's kernels may fuse a multiply and an add where the reference rounds twice.
      CHECK(max_relative_difference(ours, expected) < 1e-5);
    }
  // The two modes are different methods once something is compressed with memory.
  CHECK(max_relative_difference(reference("update", {0.9, 0, false}), reference("gradient", {0.9, 0, false})) > 1e-2);
}

TEST_CASE("exchange = \"update\" with no compression trains as \"gradient\" does", "[train][exchange][multirank]") {
  for (const double momentum : {0.0, 0.9}) {
    INFO("momentum " << momentum);
    const auto gradient = losses_of(small_run("gradient", momentum));
    const auto update = losses_of(small_run("update", momentum));
    REQUIRE(gradient.size() == 8);
    REQUIRE(update.size() == gradient.size());
    // mean(lr g_i) and lr mean(g_i) differ by float32 rounding only; momentum is linear.
    for (std::size_t t = 0; t < gradient.size(); ++t) CHECK(update[t] == Approx(gradient[t]).epsilon(1e-5));
  }
}

TEST_CASE("a run with exchange = \"update\" is refused, with the reason, by what cannot exchange updates",
          "[train][exchange]") {
  engine::EngineCatalog catalog;
  auto run = small_run("update", 0.9);
  auto refused = [&](const std::string& kind, const std::string& name, const std::map<std::string, Value>& fields) {
    RunConfig r = run;
    ComponentSpec spec = catalog.resolve({kind, name, fields});
    if (kind == "compressor") r.compressor = spec;
    if (kind == "topology") r.topology = spec;
    if (kind == "schedule") r.schedule = spec;
    return r;
  };
  CHECK_NOTHROW(catalog.check_run(run));
  CHECK_NOTHROW(catalog.check_run(refused("compressor", "topk", {})));
  CHECK_THROWS_WITH(catalog.check_run(refused("compressor", "signsgd", {})),
                    Catch::Contains("exchange = \"update\" cannot run with compressor signsgd: its majority vote"));
  CHECK_THROWS_WITH(catalog.check_run(refused("topology", "allreduce", {{"overlap", true}})),
                    Catch::Contains("topology allreduce: allreduce { overlap = true } sends buckets while backward"));
  CHECK_THROWS_WITH(catalog.check_run(refused("topology", "gossip", {})), Catch::Contains("gossip exchanges models"));
  CHECK_THROWS_WITH(catalog.check_run(refused("schedule", "local_sgd", {})), Catch::Contains("schedule local_sgd"));
  // A parameter server that averages what it receives can; one that steps an optimizer cannot.
  CHECK_NOTHROW(catalog.check_run(refused("topology", "parameter_server", {{"pull", std::string("gradients")}})));
  CHECK_THROWS_WITH(catalog.check_run(refused("topology", "parameter_server", {})),
                    Catch::Contains("pull = \"weights\" the server steps its own optimizer"));
}

TEST_CASE("clip_norm bounds the averaged gradient's step, and a bound above every norm changes nothing",
          "[train][clip][multirank]") {
  const RunConfig plain = small_run("gradient", 0.0);  // SGD, lr 0.1: a step moves by lr x |g|
  RunConfig clipped = plain;
  clipped.clip_norm = 1e-9;  // every step moves the weights by at most 1e-10
  RunConfig loose = plain;
  loose.clip_norm = 1e9;  // above every norm: never clips
  RunConfig frozen = plain;
  frozen.optimizer = engine::EngineCatalog().resolve({"optimizer", "sgd", {{"lr", 1e-12}}});
  const auto unclipped = losses_of(plain);
  REQUIRE(unclipped.size() == 8);
  CHECK(losses_of(loose) == unclipped);
  const auto tiny = losses_of(clipped);
  const auto still = losses_of(frozen);
  REQUIRE(tiny.size() == still.size());
  double moved = 0;
  for (std::size_t t = 0; t < tiny.size(); ++t) {
    CHECK(tiny[t] == Approx(still[t]).epsilon(1e-6));  // the clipped run barely moved
    moved = std::max(moved, std::fabs(unclipped[t] - still[t]));
  }
  CHECK(moved > 1e-3);  // while the unclipped one did
}
