// DeMo (engine/train/optim/demo.hpp, engine/compress/demo_codec.hpp) against a plain reference in
// doubles written from demo.py's step: delta = decay delta + lr g; each chunk's orthonormal
// DCT-II; the top-k coefficients by magnitude; the sent part decoded and taken off delta; the
// workers' coefficients averaged over those that sent each; decoded; p = p (1 - lr wd) - lr
// sign(mean). Two workers, three steps, a matrix and a vector. Then a run: every worker holds the
// same weights, the payload is 6 bytes a coefficient sent, and what demo cannot run with.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/compress/demo_codec.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/train/builtin.hpp"
#include "engine/train/optim/demo.hpp"
#include "train_ranks.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using laconic::testing::train_ranks;

namespace {

double basis(std::size_t n, std::size_t i, std::size_t k) {
  const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n));
  return scale * std::cos(std::numbers::pi * static_cast<double>((2 * i + 1) * k) / (2.0 * static_cast<double>(n)));
}

// One layer as demo.py sees it: rows x cols in blocks of n1 x n2 (a vector: one row, n1 = 1).
struct RefLayer {
  std::size_t rows, cols, n1, n2, k;
  std::size_t size() const { return rows * cols; }
  std::size_t chunk() const { return n1 * n2; }

  // Coefficients chunk after chunk, each row-major; decode() is the transpose of the same sum.
  std::vector<double> encode(const std::vector<double>& x) const { return transform(x, true); }
  std::vector<double> decode(const std::vector<double>& c) const { return transform(c, false); }
  std::vector<double> transform(const std::vector<double>& in, bool forward) const {
    std::vector<double> out(size(), 0.0);
    std::size_t at = 0;
    for (std::size_t cy = 0; cy < rows / n1; ++cy)
      for (std::size_t cx = 0; cx < cols / n2; ++cx)
        for (std::size_t b = 0; b < n1; ++b)
          for (std::size_t d = 0; d < n2; ++d, ++at)
            for (std::size_t h = 0; h < n1; ++h)
              for (std::size_t w = 0; w < n2; ++w) {
                const std::size_t element = (cy * n1 + h) * cols + cx * n2 + w;
                const double f = basis(n1, h, b) * basis(n2, w, d);
                if (forward)
                  out[at] += in[element] * f;
                else
                  out[element] += in[at] * f;
              }
    return out;
  }
  // The top-k positions of each chunk, flat (largest magnitude first, the earlier on a tie).
  std::vector<std::size_t> topk(const std::vector<double>& c) const {
    std::vector<std::size_t> out;
    for (std::size_t first = 0; first < size(); first += chunk()) {
      std::vector<std::size_t> order(chunk());
      for (std::size_t i = 0; i < chunk(); ++i) order[i] = first + i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return std::abs(c[a]) > std::abs(c[b]); });
      out.insert(out.end(), order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return out;
  }
};

}  // namespace

TEST_CASE("DeMo steps as demo.py does: a plain reference in doubles over three steps of two workers",
          "[train][demo]") {
  const double lr = 0.1, decay = 0.9, wd = 0.01;
  // [8, 12] in blocks of 4 x 4 (3 of 16 coefficients sent each); [12] in runs of 4 (3 of 4).
  const std::vector<RefLayer> layers = {{8, 12, 4, 4, 3}, {1, 12, 1, 4, 3}};
  const std::vector<compress::LayerShape> shapes = {{8, 12}, {12}};
  const std::size_t total = 108;
  train::DemoOptions options;
  options.lr = lr;
  options.chunk = 4;
  options.topk = 3;
  options.decay = decay;
  options.weight_decay = wd;
  train::Demo optimizer(options);
  std::vector<std::unique_ptr<compress::Compressor>> codecs;
  for (int w = 0; w < 2; ++w) {
    codecs.push_back(optimizer.own_codec());
    codecs.back()->set_layer_shapes(shapes);
  }
  torch::manual_seed(3);
  std::vector<torch::Tensor> params = {torch::randn({8, 12}), torch::randn({12})};
  torch::Tensor flat = torch::zeros({static_cast<std::int64_t>(total)});
  params[0].mutable_grad() = flat.narrow(0, 0, 96).view({8, 12});
  params[1].mutable_grad() = flat.narrow(0, 96, 12);
  std::vector<double> reference;
  for (const auto& p : params)
    for (std::int64_t i = 0; i < p.numel(); ++i) reference.push_back(p.flatten()[i].item<double>());
  std::vector<std::vector<double>> delta(2, std::vector<double>(total, 0.0));
  compress::Rng rng(5);
  std::size_t ambiguous = 0;  // elements whose mean the reference puts within float rounding of 0
  for (int step = 0; step < 3; ++step) {
    std::vector<double> sums(total, 0.0), counts(total, 0.0);
    std::vector<compress::Payload> payloads(2);
    for (int w = 0; w < 2; ++w) {
      std::vector<float> g(total);
      for (float& v : g) v = 2.0f * rng.uniform() - 1.0f;
      // laconic: the update lr g through the codec
      std::copy(g.begin(), g.end(), flat.data_ptr<float>());
      optimizer.compute_update(params);
      codecs[w]->compress(std::span<const float>(flat.data_ptr<float>(), total), payloads[w]);
      // the reference, layer by layer
      std::size_t offset = 0;
      for (const RefLayer& l : layers) {
        std::vector<double> d(delta[w].begin() + static_cast<std::ptrdiff_t>(offset),
                              delta[w].begin() + static_cast<std::ptrdiff_t>(offset + l.size()));
        for (std::size_t i = 0; i < l.size(); ++i) d[i] = decay * d[i] + lr * static_cast<double>(g[offset + i]);
        const std::vector<double> c = l.encode(d);
        std::vector<double> sent(l.size(), 0.0);
        for (std::size_t at : l.topk(c)) {
          sent[at] = c[at];
          sums[offset + at] += c[at];
          counts[offset + at] += 1;
        }
        const std::vector<double> back = l.decode(sent);
        for (std::size_t i = 0; i < l.size(); ++i) delta[w][offset + i] = d[i] - back[i];
        offset += l.size();
      }
    }
    std::span<float> dense(flat.data_ptr<float>(), total);
    std::fill(dense.begin(), dense.end(), 0.0f);
    for (const auto& p : payloads) codecs[0]->decompress_add(p, dense);
    codecs[0]->aggregate(dense, 2);
    optimizer.apply_exchanged(params);
    std::size_t offset = 0;
    for (const RefLayer& l : layers) {
      std::vector<double> mean(l.size());
      for (std::size_t i = 0; i < l.size(); ++i)
        mean[i] = counts[offset + i] > 0 ? sums[offset + i] / counts[offset + i] : 0.0;
      const std::vector<double> m = l.decode(mean);
      for (std::size_t i = 0; i < l.size(); ++i) {
        double& p = reference[offset + i];
        if (std::abs(m[i]) < 1e-6) ++ambiguous;
        p = p * (1 - lr * wd) - lr * (m[i] > 0 ? 1.0 : m[i] < 0 ? -1.0 : 0.0);
      }
      offset += l.size();
    }
  }
  // Float against double: the same signs wherever the mean is clear of rounding, so the weights
  // agree to float rounding of three steps.
  CHECK(ambiguous == 0);
  std::size_t i = 0;
  double worst = 0;
  for (const auto& p : params)
    for (std::int64_t e = 0; e < p.numel(); ++e, ++i)
      worst = std::max(worst, std::abs(p.flatten()[e].item<double>() - reference[i]));
  INFO("largest difference of the weights from the reference: " << worst);
  CHECK(worst < 1e-5);
  // The momentum too: what was not sent stayed.
  const auto* codec = dynamic_cast<const compress::DemoCodec*>(codecs[1].get());
  REQUIRE(codec != nullptr);
  for (std::size_t e = 0; e < total; ++e) CHECK(codec->delta()[e] == Approx(delta[1][e]).margin(1e-5));
}

namespace {

RunConfig demo_run(std::int64_t steps) {
  engine::EngineCatalog catalog;
  RunConfig c = laconic::testing::lenet_test_run("demo", steps);
  c.optimizer = catalog.resolve({"optimizer", "demo", {{"lr", 1e-3}}});
  c.topology = catalog.resolve({"topology", "allgather", {}});
  return c;
}

}  // namespace

TEST_CASE("a DeMo run: every worker holds the same weights, and sends 6 bytes a coefficient", "[train][demo][multirank]") {
  const auto ranks = train_ranks(demo_run(6));
  CHECK(ranks.at(0).result.parameter_hash == ranks.at(1).result.parameter_hash);
  compress::DemoCodec codec(64, 32, 0.999);
  std::vector<compress::LayerShape> shapes;
  for (const auto& p : train::builtin_models().create(demo_run(1).model)->parameters())
    shapes.emplace_back(p.sizes().begin(), p.sizes().end());
  codec.set_layer_shapes(shapes);
  // LeNet-5 at chunk 64, topk 32: conv1 1 block of 6 x 25 (32 sent), its bias 1 run of 6 (6),
  // conv2 3 of 16 x 50 (96), its bias 16, fc1 16 of 60 x 50 (512), its bias 2 of 60 (64), fc2 4
  // of 42 x 60 (128), its bias 2 of 42 (64), fc3 2 of 10 x 42 (64), its bias 10: 992 coefficients.
  CHECK(codec.payload_size() == 6 * 992);
  for (const auto& r : ranks.at(0).records)
    if (r.key == "payload_bytes") CHECK(r.value == static_cast<double>(codec.payload_size()));
  for (const auto& r : ranks.at(0).records)
    if (r.key == "train_loss") CHECK(std::isfinite(r.value));
}

TEST_CASE("DeMo refuses a compressor, a topology that cannot gather, and schedules that average models",
          "[train][demo]") {
  engine::EngineCatalog catalog;
  const auto refused = laconic::testing::refusal_of;
  RunConfig c = demo_run(4);
  CHECK(refused(c) == "(accepted)");
  c.compressor = catalog.resolve({"compressor", "topk", {}});
  CHECK_THAT(refused(c), Catch::Contains("compressor must be none(), got topk"));
  c = demo_run(4);
  c.topology = catalog.resolve({"topology", "gossip", {}});
  CHECK_THAT(refused(c), Catch::Contains("topology must be allreduce() or allgather(), got gossip"));
  c = demo_run(4);
  c.schedule = catalog.resolve({"schedule", "local_sgd", {}});
  CHECK_THAT(refused(c), Catch::Contains("optimizer demo exchanges its updates") && Catch::Contains("local_sgd"));
  c = demo_run(4);
  c.topology = catalog.resolve({"topology", "allreduce", {{"overlap", true}}});
  CHECK_THAT(refused(c), Catch::Contains("cannot bucket it"));
}
