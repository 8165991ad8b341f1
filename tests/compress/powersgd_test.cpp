// PowerSGD: exact recovery of rank-r matrices, the projection property of one power-iteration
// step averaged over workers, convergence of warm-started steps to the best rank-r
// approximation, error feedback, dense layers, start_iter, bytes and option checks.
#include <barrier>
#include <cmath>
#include <thread>

#include <catch2/catch.hpp>

#include "compress_test_support.hpp"
#include "engine/compress/powersgd.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

/// A reducer for one worker: the sum over one worker is the value itself. Counts floats.
struct SoloReducer : SumReducer {
  void sum(std::span<float> values) override { floats += values.size(); }
  int workers() const override { return 1; }
  std::size_t floats = 0;
};

/// Sums across `n` threads: each deposits its buffer, waits, then reads the total.
class ThreadReducer {
 public:
  explicit ThreadReducer(int n) : n_(n), buffers_(static_cast<std::size_t>(n)), barrier_(n) {}

  struct Handle : SumReducer {
    ThreadReducer* owner;
    int rank;
    std::size_t floats = 0;
    void sum(std::span<float> values) override {
      floats += values.size();
      owner->buffers_[static_cast<std::size_t>(rank)] = values;
      owner->barrier_.arrive_and_wait();
      std::vector<float> total(values.size(), 0.0f);
      for (const auto& b : owner->buffers_)
        for (std::size_t i = 0; i < values.size(); ++i) total[i] += b[i];
      owner->barrier_.arrive_and_wait();  // everyone has read the others' buffers
      std::copy(total.begin(), total.end(), values.begin());
    }
    int workers() const override { return owner->n_; }
  };
  Handle handle(int rank) {
    Handle h;
    h.owner = this;
    h.rank = rank;
    return h;
  }

 private:
  int n_;
  std::vector<std::span<float>> buffers_;
  std::barrier<> barrier_;
};

PowerSgdOptions powersgd_options(std::int64_t rank, bool warm_start = true, bool error_feedback = true,
                        std::int64_t start_iter = 0) {
  PowerSgdOptions o;
  o.rank = rank;
  o.warm_start = warm_start;
  o.error_feedback = error_feedback;
  o.start_iter = start_iter;
  return o;
}

/// rows x cols row-major product A B^T of random rows x r and cols x r factors.
std::vector<float> low_rank(std::size_t rows, std::size_t cols, std::size_t r, unsigned seed) {
  const auto a = testing::random_gradient(rows * r, seed);
  const auto b = testing::random_gradient(cols * r, seed + 1);
  std::vector<float> m(rows * cols, 0.0f);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k)
      for (std::size_t j = 0; j < r; ++j) m[i * cols + k] += a[i * r + j] * b[k * r + j];
  return m;
}

double norm2(std::span<const float> v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return s;
}

/// Orthonormal columns (rows x r, row-major) by Gram-Schmidt in double, reference style.
std::vector<double> orthonormal(std::size_t rows, std::size_t r, unsigned seed) {
  const auto g = testing::random_gradient(rows * r, seed);
  std::vector<double> u(g.begin(), g.end());
  for (std::size_t j = 0; j < r; ++j) {
    for (std::size_t k = 0; k < j; ++k) {
      double dot = 0;
      for (std::size_t i = 0; i < rows; ++i) dot += u[i * r + j] * u[i * r + k];
      for (std::size_t i = 0; i < rows; ++i) u[i * r + j] -= dot * u[i * r + k];
    }
    double n = 0;
    for (std::size_t i = 0; i < rows; ++i) n += u[i * r + j] * u[i * r + j];
    for (std::size_t i = 0; i < rows; ++i) u[i * r + j] /= std::sqrt(n);
  }
  return u;
}

}  // namespace

TEST_CASE("powersgd recovers a rank-r matrix exactly at rank r", "[compress][powersgd]") {
  for (std::size_t r : {1, 2, 4}) {
    const std::size_t rows = 40, cols = 30;
    const auto m = low_rank(rows, cols, r, 7 + static_cast<unsigned>(r));
    PowerSgdCompressor c(powersgd_options(static_cast<std::int64_t>(r)));
    c.set_seed(3, 0);
    c.set_layer_shapes({{rows, cols}});
    std::vector<float> g = m;
    SoloReducer reducer;
    c.exchange(g, reducer);
    double err = 0;
    for (std::size_t i = 0; i < m.size(); ++i) err += std::pow(g[i] - m[i], 2);
    // float32 arithmetic on entries of size ~sqrt(r): relative error ~1e-6.
    CHECK(std::sqrt(err / norm2(m)) < 1e-4);
    CHECK(std::sqrt(norm2(c.residual()) / norm2(m)) < 1e-4);
  }
}

TEST_CASE(
    "powersgd's update is the projection of the workers' mean onto r directions, and "
    "error feedback keeps the rest",
    "[compress][powersgd]") {
  // Layers: a conv-shaped weight (8 x 3x3x3 = 8 x 27), a bias (dense), a 20 x 12 matrix.
  const std::vector<LayerShape> shapes = {{8, 3, 3, 3}, {8}, {20, 12}};
  const std::size_t n = 8 * 27 + 8 + 20 * 12, r = 2;
  constexpr int kWorkers = 3;
  ThreadReducer reducer(kWorkers);
  std::vector<std::vector<float>> inputs, outputs(kWorkers), residuals(kWorkers);
  for (int w = 0; w < kWorkers; ++w) inputs.push_back(testing::random_gradient(n, 100 + static_cast<unsigned>(w)));
  std::vector<std::size_t> floats(kWorkers);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w)
    threads.emplace_back([&, w] {
      PowerSgdCompressor c(powersgd_options(r));
      c.set_seed(11, w);
      c.set_layer_shapes(shapes);
      auto handle = reducer.handle(w);
      outputs[w] = inputs[w];
      c.exchange(outputs[w], handle);
      residuals[w].assign(c.residual().begin(), c.residual().end());
      floats[w] = handle.floats;
    });
  for (auto& t : threads) t.join();

  std::vector<double> mean(n, 0.0);
  for (const auto& in : inputs)
    for (std::size_t i = 0; i < n; ++i) mean[i] += in[i] / kWorkers;
  for (int w = 1; w < kWorkers; ++w) CHECK(outputs[w] == outputs[0]);  // all apply one update
  const auto& out = outputs[0];
  // The bias is sent dense: exactly the mean, nothing left in the residual.
  for (std::size_t i = 216; i < 224; ++i) {
    CHECK(out[i] == Approx(mean[i]).margin(1e-6));
    for (int w = 0; w < kWorkers; ++w) CHECK(residuals[w][i] == 0.0f);
  }
  // Each matrix layer: the update U = P P^T M is the orthogonal projection of the mean M onto
  // the r orthonormal columns of P, so M - U is orthogonal to U: <M - U, U> = 0.
  for (auto [offset, size] : {std::pair<std::size_t, std::size_t>{0, 216}, {224, 240}}) {
    double cross = 0, scale = 0;
    for (std::size_t i = offset; i < offset + size; ++i) {
      cross += (mean[i] - out[i]) * out[i];
      scale += mean[i] * mean[i];
    }
    CHECK(std::abs(cross) < 1e-5 * scale);
  }
  // Error feedback on the matrix layers: residual = (own input) - update, element by element.
  for (int w = 0; w < kWorkers; ++w)
    for (std::size_t i = 0; i < n; ++i)
      if (i < 216 || i >= 224) REQUIRE(residuals[w][i] == Approx(inputs[w][i] - out[i]).margin(1e-5));
  // Bytes: (8 + 27) * 2 + (20 + 12) * 2 floats of P and Q, plus the 8 dense bias values.
  CHECK(powersgd_floats(shapes, r) == 35 * 2 + 32 * 2 + 8);
  for (int w = 0; w < kWorkers; ++w) CHECK(floats[w] == powersgd_floats(shapes, r));
}

TEST_CASE("warm-started powersgd steps converge to the best rank-r approximation", "[compress][powersgd]") {
  // M = U diag(s) V^T with known singular values: the best rank-2 error is s3^2 + s4^2 + ...
  const std::size_t rows = 30, cols = 25, full = 6;
  const std::vector<double> s = {10, 6, 3, 2, 1, 0.5};
  const auto u = orthonormal(rows, full, 1), v = orthonormal(cols, full, 2);
  std::vector<float> m(rows * cols, 0.0f);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < cols; ++k) {
      double sum = 0;
      for (std::size_t j = 0; j < full; ++j) sum += u[i * full + j] * s[j] * v[k * full + j];
      m[i * cols + k] = static_cast<float>(sum);
    }
  const double best = 3 * 3 + 2 * 2 + 1 * 1 + 0.5 * 0.5;

  PowerSgdCompressor warm(powersgd_options(2, true, false)), cold(powersgd_options(2, false, false));
  for (auto* c : {&warm, &cold}) {
    c->set_seed(5, 0);
    c->set_layer_shapes({{rows, cols}});
  }
  SoloReducer reducer;
  double warm_err = 0, cold_err = 0;
  for (int step = 0; step < 40; ++step) {
    std::vector<float> a = m, b = m;
    warm.exchange(a, reducer);
    cold.exchange(b, reducer);
    warm_err = cold_err = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      warm_err += std::pow(a[i] - m[i], 2);
      cold_err += std::pow(b[i] - m[i], 2);
    }
  }
  // Power iteration with ratio s3/s2 = 0.5 per step: after 40 steps the warm start is at the
  // optimum up to float rounding; a fresh random Q every step stays a single iteration away.
  CHECK(warm_err == Approx(best).epsilon(1e-3));
  CHECK(cold_err > best * 1.01);
}

TEST_CASE("powersgd sends the plain mean for its first start_iter steps", "[compress][powersgd]") {
  PowerSgdCompressor c(powersgd_options(1, true, true, 2));
  c.set_seed(1, 0);
  c.set_layer_shapes({{10, 10}});
  const auto g = testing::random_gradient(100, 4);
  SoloReducer reducer;
  for (int step = 0; step < 2; ++step) {
    std::vector<float> x = g;
    CHECK(c.exchange(x, reducer) == 400);
    CHECK(x == g);
  }
  std::vector<float> x = g;
  CHECK(c.exchange(x, reducer) == (10 + 10) * 4);
  CHECK(x != g);
}

TEST_CASE("powersgd options name the field, the value and the range", "[compress][powersgd]") {
  auto spec = [](std::int64_t rank, std::int64_t start) {
    return ComponentSpec{"compressor",
                         "powersgd",
                         {{"rank", rank}, {"warm_start", true}, {"start_iter", start}, {"error_feedback", true}}};
  };
  CHECK_THROWS_WITH(PowerSgdOptions::fields().read(spec(0, 0)), "powersgd.rank must be in [1, 1024], got 0");
  CHECK_THROWS_WITH(PowerSgdOptions::fields().read(spec(2, -1)), "powersgd.start_iter must be >= 0, got -1");
  PowerSgdCompressor c(powersgd_options(2));
  Payload p;
  CHECK_THROWS_AS(c.compress(std::vector<float>(4), p), InvariantError);
}
