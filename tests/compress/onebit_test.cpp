#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/compress/onebit.hpp"
#include "engine/core/error.hpp"
#include "engine/core/registry.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

struct Means {
  float positive, negative;
};

// The two reconstruction values, summed left to right in double: mean of p_i >= 0, mean of
// p_i < 0, 0 for an empty side.
Means reference_means(const std::vector<float>& p) {
  double sum_positive = 0.0, sum_negative = 0.0;
  std::size_t positives = 0, negatives = 0;
  for (float v : p) {
    if (v >= 0.0f)
      sum_positive += v, ++positives;
    else
      sum_negative += v, ++negatives;
  }
  return {positives ? static_cast<float>(sum_positive / static_cast<double>(positives)) : 0.0f,
          negatives ? static_cast<float>(sum_negative / static_cast<double>(negatives)) : 0.0f};
}

float payload_float(const Payload& p, std::size_t offset) {
  float v;
  std::memcpy(&v, p.data() + offset, 4);
  return v;
}

// The codec sums in another order (eight double lanes) before rounding to float: at most one
// float ulp (relative 2^-23) from the left-to-right double sum.
bool within_one_ulp(float got, float want) { return std::fabs(got - want) <= std::ldexp(std::fabs(want), -23); }

}  // namespace

TEST_CASE("onebit sends one bit per element and the mean of each side, in 12 header bytes", "[compress][onebit]") {
  OnebitCodec codec;
  CHECK(codec.name() == "onebit");
  CHECK_FALSE(codec.summable());
  for (std::size_t n : {1u, 7u, 8u, 9u, 1000u, 12345u}) {
    auto g = random_gradient(n, static_cast<unsigned>(n) + 5);
    for (std::size_t i = 0; i < n; i += 10) g[i] += 0.5f;  // make the two sides unequal
    Payload payload;
    codec.compress(g, payload);
    CHECK(payload.size() == 12 + (n + 7) / 8);
    CHECK(payload.size() == onebit_payload_bytes(n));
    const Means want = reference_means(g);
    const float mean_positive = payload_float(payload, 4);
    const float mean_negative = payload_float(payload, 8);
    CHECK(within_one_ulp(mean_positive, want.positive));
    CHECK(within_one_ulp(mean_negative, want.negative));
    const auto dense = decode(codec, payload, n);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(((payload[12 + i / 8] >> (i % 8)) & 1) == (g[i] < 0.0f));
      REQUIRE(dense[i] == (g[i] < 0.0f ? mean_negative : mean_positive));
    }
  }
}

TEST_CASE("onebit's reconstruction keeps the sum of each side", "[compress][onebit]") {
  // count * mean = sum on each side, so the decoded vector has the input's sum; tolerance:
  // float rounding of the means and of the sums, 1e-5 of the l1 norm.
  const auto g = random_gradient(10000, 8);
  OnebitCodec codec;
  Payload payload;
  codec.compress(g, payload);
  const auto dense = decode(codec, payload, g.size());
  double sum_in = 0.0, sum_out = 0.0, l1 = 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    sum_in += g[i];
    sum_out += dense[i];
    l1 += std::fabs(g[i]);
  }
  CHECK(std::fabs(sum_in - sum_out) <= 1e-5 * l1);
}

TEST_CASE("onebit with error feedback: sent plus residual is what was fed in, every step",
          "[compress][onebit][error_feedback]") {
  const std::size_t n = 5000;
  OnebitCompressor onebit(OnebitOptions{true});
  std::vector<float> previous_residual(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    const auto g = random_gradient(n, 500 + step);
    Payload payload;
    onebit.compress(g, payload);
    const auto sent = decode(onebit, payload, n);
    const auto residual = onebit.residual();
    REQUIRE(residual.size() == n);
    std::vector<float> fed(n);
    for (std::size_t i = 0; i < n; ++i) fed[i] = g[i] + previous_residual[i];
    const Means want = reference_means(fed);
    CHECK(within_one_ulp(payload_float(payload, 4), want.positive));
    CHECK(within_one_ulp(payload_float(payload, 8), want.negative));
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(sent[i] == payload_float(payload, fed[i] < 0.0f ? 8 : 4));
      // Exact, element-wise: the residual is fed - sent, rounded once to float.
      REQUIRE(residual[i] == fed[i] - sent[i]);
      // sent + residual reproduces fed up to that one rounding (in double, where the sum is
      // exact): |error| <= 2^-24 |fed - sent|. Exact float equality cannot hold for every input.
      const double reconstruction = static_cast<double>(sent[i]) + residual[i];
      REQUIRE(std::fabs(reconstruction - fed[i]) <= std::ldexp(std::fabs(static_cast<double>(fed[i]) - sent[i]), -24));
    }
    previous_residual.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("onebit on all-zero, one-sided and empty gradients", "[compress][onebit]") {
  OnebitCompressor onebit(OnebitOptions{true});
  const std::vector<float> zeros(50, 0.0f);
  Payload payload;
  for (int step = 0; step < 3; ++step) {
    onebit.compress(zeros, payload);
    CHECK(payload_float(payload, 4) == 0.0f);
    CHECK(payload_float(payload, 8) == 0.0f);  // no negatives: mean 0
    CHECK(decode(onebit, payload, 50) == zeros);
    CHECK(std::vector<float>(onebit.residual().begin(), onebit.residual().end()) == zeros);
  }
  OnebitCodec codec;
  codec.compress(std::vector<float>{-1.0f, -2.0f, -3.0f, -6.0f}, payload);
  CHECK(payload_float(payload, 4) == 0.0f);
  CHECK(decode(codec, payload, 4) == std::vector<float>(4, -3.0f));
  codec.compress(std::vector<float>{}, payload);
  CHECK(payload.size() == onebit_payload_bytes(0));
  CHECK(payload.size() == 12);
}

TEST_CASE("onebit averages the workers' decoded payloads", "[compress][onebit]") {
  OnebitCodec codec;
  std::vector<float> sum(4, 0.0f);
  Payload payload;
  codec.compress(std::vector<float>{1.0f, 3.0f, -2.0f, -4.0f}, payload);  // means 2 and -3
  codec.decompress_add(payload, sum);
  codec.compress(std::vector<float>{-1.0f, 5.0f, 5.0f, 2.0f}, payload);  // means 4 and -1
  codec.decompress_add(payload, sum);
  codec.aggregate(sum, 2);
  CHECK(sum == std::vector<float>{0.5f, 3.0f, 0.5f, 0.5f});
}

TEST_CASE("onebit options and payload checks", "[compress][onebit]") {
  Registry<Compressor> registry("compressor");
  registry.add<OnebitCompressor, OnebitOptions>("onebit", "1-bit SGD");
  CHECK(registry.resolve({"compressor", "onebit", {}}).flag("error_feedback"));
  REQUIRE_THROWS_WITH(registry.create({"compressor", "onebit", {{"error_feedback", 1.0}}}),
                      Catch::Contains("onebit.error_feedback must be a bool"));
  OnebitCodec codec;
  Payload payload;
  codec.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f), right(100, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  payload.pop_back();
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, right),
                      Catch::Contains("expected 25 payload bytes for n=100, got 24"));
  payload.resize(11);
  REQUIRE_THROWS_AS(codec.decompress_add(payload, right), InvariantError);
}
