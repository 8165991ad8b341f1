// 1-bit Adam (engine/train/optim/onebit_adam.hpp, engine/compress/onebit_adam_codec.hpp) against a
// plain reference in doubles written from the paper's Algorithm 1 (and DeepSpeed's OnebitAdam):
// Adam on the workers' mean gradient for the warm-up; then the variance frozen, each worker's
// momentum m = beta1 m + (1 - beta1) g sent as ||b|| / sqrt(n) sign(b) with b = m + error, the
// error keeping b less what was sent, m the mean of what was sent, p -= lr m / (sqrt(v) + eps).
// Then the promises it rests on (the warm-up is Adam; the frozen variance is the warm-up's; error
// feedback keeps what was not sent), and a run.
#include <algorithm>
#include <cmath>

#include "engine/compress/onebit_adam_codec.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/optim/adam.hpp"
#include "engine/train/optim/onebit_adam.hpp"
#include "train_ranks.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using laconic::testing::train_ranks;

namespace {

const std::vector<compress::LayerShape> kShapes = {{6, 5}, {7}};
constexpr std::size_t kTotal = 37;

// Two parameters whose .grad() are views into one flat buffer, as the worker lays them out.
struct Params {
  std::vector<torch::Tensor> tensors;
  torch::Tensor flat = torch::zeros({static_cast<std::int64_t>(kTotal)});

  explicit Params(int seed) {
    torch::manual_seed(seed);
    tensors = {torch::randn({6, 5}), torch::randn({7})};
    tensors[0].mutable_grad() = flat.narrow(0, 0, 30).view({6, 5});
    tensors[1].mutable_grad() = flat.narrow(0, 30, 7);
  }
  std::span<float> grad() { return {flat.data_ptr<float>(), kTotal}; }
  std::vector<double> weights() const {
    std::vector<double> out;
    for (const auto& p : tensors)
      for (std::int64_t i = 0; i < p.numel(); ++i) out.push_back(p.flatten()[i].item<double>());
    return out;
  }
};

std::vector<float> random_gradient(compress::Rng& rng) {
  std::vector<float> g(kTotal);
  for (float& v : g) v = 2.0f * rng.uniform() - 1.0f;
  return g;
}

train::OnebitAdamOptions options(std::int64_t warmup) {
  train::OnebitAdamOptions o;
  o.lr = 0.01;
  o.weight_decay = 0.1;
  o.warmup_steps = warmup;
  return o;
}

// One worker: its optimizer, codec and parameters (the same initial weights on every worker).
struct OnebitWorker {
  train::OnebitAdam optimizer;
  std::unique_ptr<compress::Compressor> codec;
  Params params{3};

  explicit OnebitWorker(const train::OnebitAdamOptions& o) : optimizer(o), codec(optimizer.own_codec()) {
    codec->set_layer_shapes(kShapes);
  }
};

// One step of `workers` through laconic: each one's update compressed, the payloads summed (as
// the allreduce or gather does), their mean in every worker's .grad(), the step applied.
void step_all(std::vector<OnebitWorker>& workers, std::int64_t step, const std::vector<std::vector<float>>& gradients) {
  std::vector<compress::Payload> payloads(workers.size());
  for (std::size_t w = 0; w < workers.size(); ++w) {
    OnebitWorker& worker = workers[w];
    worker.codec->advance({0, step});
    std::copy(gradients[w].begin(), gradients[w].end(), worker.params.grad().begin());
    worker.optimizer.compute_update(worker.params.tensors);
    worker.codec->compress(worker.params.grad(), payloads[w]);
  }
  for (OnebitWorker& worker : workers) {
    std::span<float> dense = worker.params.grad();
    std::fill(dense.begin(), dense.end(), 0.0f);
    for (const auto& payload : payloads) worker.codec->decompress_add(payload, dense);
    worker.codec->aggregate(dense, static_cast<int>(workers.size()));
    worker.optimizer.apply_exchanged(worker.params.tensors);
  }
}

}  // namespace

TEST_CASE("1-bit Adam steps as its paper's Algorithm 1: a plain reference in doubles, two workers",
          "[train][onebit_adam]") {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
  const std::int64_t warmup = 2, steps = 5;
  std::vector<OnebitWorker> workers;
  for (int w = 0; w < 2; ++w) workers.emplace_back(options(warmup));
  std::vector<double> p = workers[0].params.weights(), m(kTotal, 0.0), v(kTotal, 0.0);
  std::vector<std::vector<double>> error(2, std::vector<double>(kTotal, 0.0));
  compress::Rng rng(5);
  std::size_t ambiguous = 0;  // elements the reference puts within float rounding of 0
  for (std::int64_t step = 0; step < steps; ++step) {
    const bool frozen = step >= warmup;
    const std::vector<std::vector<float>> g = {random_gradient(rng), random_gradient(rng)};
    step_all(workers, step, g);
    // The reference: the mean gradient, or the mean of what the workers' 1-bit momenta sent.
    std::vector<double> mean(kTotal, 0.0);
    for (int w = 0; w < 2; ++w) {
      if (!frozen) {
        for (std::size_t i = 0; i < kTotal; ++i) mean[i] += g[w][i] / 2.0;
        continue;
      }
      std::size_t first = 0;
      for (const auto& shape : kShapes) {
        const std::size_t n = shape.size() == 2 ? shape[0] * shape[1] : shape[0];
        double squares = 0;
        std::vector<double> b(n);
        for (std::size_t i = 0; i < n; ++i) {
          b[i] = b1 * m[first + i] + (1 - b1) * g[w][first + i] + error[w][first + i];
          squares += b[i] * b[i];
        }
        const double scale = std::sqrt(squares / static_cast<double>(n));
        for (std::size_t i = 0; i < n; ++i) {
          if (std::abs(b[i]) < 1e-6) ++ambiguous;
          const double c = b[i] < 0 ? -scale : scale;
          error[w][first + i] = b[i] - c;
          mean[first + i] += c / 2.0;
        }
        first += n;
      }
    }
    const double c1 = 1 - std::pow(b1, static_cast<double>(step + 1));
    const double c2 = 1 - std::pow(b2, static_cast<double>(std::min(step + 1, warmup)));
    for (std::size_t i = 0; i < kTotal; ++i) {
      if (frozen) {
        m[i] = mean[i];
      } else {
        m[i] = b1 * m[i] + (1 - b1) * mean[i];
        v[i] = b2 * v[i] + (1 - b2) * mean[i] * mean[i];
      }
      const double size = frozen ? lr : lr / c1;
      p[i] = p[i] * (1 - lr * wd) - size * m[i] / (std::sqrt(v[i] / c2) + eps);
    }
  }
  CHECK(ambiguous == 0);
  // Float against double over five steps.
  double worst = 0;
  for (const OnebitWorker& worker : workers) {
    const std::vector<double> got = worker.params.weights();
    for (std::size_t i = 0; i < kTotal; ++i) worst = std::max(worst, std::abs(got[i] - p[i]));
  }
  INFO("largest difference of either worker's weights from the reference: " << worst);
  CHECK(worst < 1e-5);
  const auto* codec = dynamic_cast<const compress::OnebitAdamCodec*>(workers[1].codec.get());
  REQUIRE(codec != nullptr);
  CHECK(codec->frozen());
  for (std::size_t e = 0; e < kTotal; ++e) CHECK(codec->error()[e] == Approx(error[1][e]).margin(1e-6));
}

TEST_CASE("1-bit Adam's warm-up is adam's step bit for bit, and its variance is then frozen", "[train][onebit_adam]") {
  const std::int64_t warmup = 3;
  // adam's weight decay is an L2 penalty, 1-bit Adam's decoupled: with none, the same arithmetic.
  auto o = options(warmup);
  o.weight_decay = 0;
  std::vector<OnebitWorker> workers;
  workers.emplace_back(o);
  train::AdamOptions adam_options;
  adam_options.lr = 0.01;
  train::Adam adam(adam_options);
  Params reference(3);
  compress::Rng rng(9);
  std::vector<torch::Tensor> frozen_variance;
  for (std::int64_t step = 0; step < warmup + 3; ++step) {
    const std::vector<float> g = random_gradient(rng);
    step_all(workers, step, {g});
    if (step < warmup) {
      std::copy(g.begin(), g.end(), reference.grad().begin());
      adam.step(reference.tensors);
      for (std::size_t i = 0; i < 2; ++i) CHECK(torch::equal(workers[0].params.tensors[i], reference.tensors[i]));
    }
    if (step == warmup - 1)
      for (std::size_t i = 0; i < 2; ++i) frozen_variance.push_back(workers[0].optimizer.variance(i).clone());
  }
  for (std::size_t i = 0; i < 2; ++i) CHECK(torch::equal(workers[0].optimizer.variance(i), frozen_variance[i]));
}

TEST_CASE("an element no warm-up gradient reached takes no 1-bit step (DeepSpeed's exp_avg_mask)",
          "[train][onebit_adam]") {
  auto o = options(2);
  o.weight_decay = 0;
  std::vector<OnebitWorker> workers;
  workers.emplace_back(o);
  const double untouched = workers[0].params.weights()[0];
  compress::Rng rng(13);
  for (std::int64_t step = 0; step < 5; ++step) {
    std::vector<float> g = random_gradient(rng);
    if (step < 2) g[0] = 0.0f;  // element 0's variance stays 0
    step_all(workers, step, {g});
  }
  CHECK(workers[0].params.weights()[0] == untouched);
  CHECK(workers[0].params.weights()[1] != Params(3).weights()[1]);
}

TEST_CASE("1-bit Adam's error feedback keeps what was not sent: the payloads sent and the error add up to the momenta",
          "[train][onebit_adam]") {
  compress::OnebitAdamCodec codec(0);
  codec.set_layer_shapes(kShapes);
  compress::Rng rng(11);
  std::vector<double> given(kTotal, 0.0);
  std::vector<float> sent(kTotal, 0.0f);
  for (std::int64_t step = 0; step < 20; ++step) {
    codec.advance({0, step});
    REQUIRE(codec.frozen());
    const std::vector<float> m = random_gradient(rng);
    for (std::size_t i = 0; i < kTotal; ++i) given[i] += m[i];
    compress::Payload payload;
    codec.compress(m, payload);
    CHECK(payload.size() == (4 + 4) + (4 + 1));  // [6, 5]: a scale and 30 bits; [7]: a scale and 7 bits
    codec.decompress_add(payload, sent);
  }
  for (std::size_t i = 0; i < kTotal; ++i) CHECK(sent[i] + codec.error()[i] == Approx(given[i]).margin(1e-4));
}

namespace {

RunConfig onebit_adam_run(std::int64_t steps, std::int64_t warmup) {
  RunConfig c = laconic::testing::lenet_test_run("onebit_adam", steps);
  c.optimizer = engine::EngineCatalog().resolve({"optimizer", "onebit_adam", {{"lr", 1e-3}, {"warmup_steps", warmup}}});
  return c;
}

}  // namespace

TEST_CASE("a 1-bit Adam run: fp32 in the warm-up, then a bit an element, and every worker holds the same weights",
          "[train][onebit_adam][multirank]") {
  const auto ranks = train_ranks(onebit_adam_run(6, 3));
  CHECK(ranks.at(0).result.parameter_hash == ranks.at(1).result.parameter_hash);
  std::vector<compress::LayerShape> shapes;
  std::size_t elements = 0, frozen_bytes = 0;
  for (const auto& p : train::builtin_models().create(onebit_adam_run(1, 1).model)->parameters()) {
    shapes.emplace_back(p.sizes().begin(), p.sizes().end());
    elements += static_cast<std::size_t>(p.numel());
    frozen_bytes += 4 + (static_cast<std::size_t>(p.numel()) + 7) / 8;
  }
  std::map<std::int64_t, double> payload;
  for (const auto& r : ranks.at(0).records)
    if (r.key == "payload_bytes") payload[r.step] = r.value;
  REQUIRE(payload.size() == 6);
  for (const auto& [step, bytes] : payload)
    CHECK(bytes == static_cast<double>(step < 3 ? 4 * elements : frozen_bytes));
  for (const auto& r : ranks.at(0).records)
    if (r.key == "train_loss") CHECK(std::isfinite(r.value));
}

TEST_CASE("1-bit Adam refuses a compressor and a topology that cannot gather", "[train][onebit_adam]") {
  engine::EngineCatalog catalog;
  const auto refused = laconic::testing::refusal_of;
  RunConfig c = onebit_adam_run(4, 2);
  CHECK(refused(c) == "(accepted)");
  c.compressor = catalog.resolve({"compressor", "fp16", {}});
  CHECK_THAT(refused(c), Catch::Contains("optimizer onebit_adam compresses its updates with its own codec"));
  c = onebit_adam_run(4, 2);
  c.topology = catalog.resolve({"topology", "gossip", {}});
  CHECK_THAT(refused(c), Catch::Contains("topology must be allreduce() or allgather(), got gossip"));
  c = onebit_adam_run(4, 2);
  c.schedule = catalog.resolve({"schedule", "diloco", {}});
  CHECK_THAT(refused(c), Catch::Contains("optimizer onebit_adam exchanges its updates"));
}
