#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "compress_test_support.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/terngrad.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// TernGrad as the paper writes it, with the codec's draws: one uniform per element when the
// scale is positive.
std::vector<float> reference_terngrad(const std::vector<float>& g, Rng& rng) {
  float scale = 0.0f;
  for (float x : g) scale = std::max(scale, std::fabs(x));
  std::vector<float> out(g.size(), 0.0f);
  if (scale == 0.0f) return out;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool keep = rng.uniform() < std::fabs(g[i]) / scale;
    if (keep) out[i] = g[i] < 0 ? -scale : scale;
  }
  return out;
}

}  // namespace

TEST_CASE("terngrad decodes exactly what the reference draws, every step", "[compress][terngrad]") {
  for (std::size_t n : {1u, 5u, 1000u, 61706u}) {
    TerngradCodec codec;
    codec.set_seed(42, 2);
    Rng rng(derive_seed(42, 2000 + 2));
    for (unsigned step = 0; step < 3; ++step) {
      const auto g = random_gradient(n, static_cast<unsigned>(n + step));
      Payload payload;
      codec.compress(g, payload);
      REQUIRE(decode(codec, payload, n) == reference_terngrad(g, rng));
    }
  }
}

TEST_CASE("terngrad sends only -s, 0 and s with s = max|g|, and always the largest", "[compress][terngrad]") {
  auto g = random_gradient(5000, 8);
  g[1234] = -9.0f;  // the largest magnitude: p = 1
  TerngradCodec codec;
  Payload payload;
  codec.compress(g, payload);
  const auto q = decode(codec, payload, g.size());
  for (float v : q) REQUIRE((v == 0.0f || v == 9.0f || v == -9.0f));
  CHECK(q[1234] == -9.0f);
  for (std::size_t i = 0; i < g.size(); ++i)
    if (q[i] != 0.0f) REQUIRE((q[i] > 0) == (g[i] > 0));
}

TEST_CASE("terngrad is unbiased: the mean of 4000 draws is the input", "[compress][terngrad]") {
  const std::vector<float> g = {0.5f, -1.25f, 0.0f, 3.0f, -0.01f, 0.7f, 2.2f, -2.9f};
  TerngradCodec codec;
  codec.set_seed(7, 0);
  const int draws = 4000;
  std::vector<double> mean(g.size(), 0.0);
  bool max_always_sent = true, zero_never_sent = true;
  for (int d = 0; d < draws; ++d) {
    Payload payload;
    codec.compress(g, payload);
    const auto q = decode(codec, payload, g.size());
    for (std::size_t i = 0; i < g.size(); ++i) mean[i] += q[i] / draws;
    max_always_sent = max_always_sent && q[3] == 3.0f;
    zero_never_sent = zero_never_sent && q[2] == 0.0f;
  }
  // A draw is s * Bernoulli(p) with variance s^2 p(1-p) <= s^2/4; the mean's standard deviation
  // is at most s/(2 sqrt(draws)); allow 5 of those (0.04 s = 0.12 here).
  const double scale = 3.0, tolerance = 5.0 * scale / (2.0 * std::sqrt(double(draws)));
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(std::fabs(mean[i] - g[i]) <= tolerance);
  CHECK(max_always_sent);  // p = 1 exactly for the maximum
  CHECK(zero_never_sent);
}

TEST_CASE("a terngrad payload is 8 header bytes plus 2 bits per element", "[compress][terngrad]") {
  TerngradCodec codec;
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 1001u, 61706u}) {
    Payload payload;
    codec.compress(random_gradient(n, 1), payload);
    CHECK(payload.size() == 8 + (n + 3) / 4);
    CHECK(payload.size() == terngrad_payload_bytes(n));
  }
}

TEST_CASE("an all-zero gradient gives s = 0 and decodes to zeros", "[compress][terngrad]") {
  TerngradCodec codec;
  Payload payload;
  codec.compress(std::vector<float>(17, 0.0f), payload);
  CHECK(payload.size() == terngrad_payload_bytes(17));
  CHECK(decode(codec, payload, 17) == std::vector<float>(17, 0.0f));
}

TEST_CASE("terngrad carries a NaN on to every element", "[compress][terngrad]") {
  std::vector<float> g(10, 1.0f);
  g[3] = std::nanf("");
  TerngradCodec codec;
  Payload payload;
  codec.compress(g, payload);
  for (float v : decode(codec, payload, 10)) CHECK(std::isnan(v));
}

TEST_CASE("terngrad refuses payloads of the wrong length, size or code", "[compress][terngrad]") {
  TerngradCodec codec;
  Payload payload;
  codec.compress(random_gradient(100, 3), payload);
  std::vector<float> wrong(99, 0.0f), right(100, 0.0f);
  CHECK_THROWS_WITH(codec.decompress_add(payload, wrong),
                    Catch::Contains("expected a payload for 99 elements, got one for 100"));
  Payload shorter(payload.begin(), payload.end() - 1);
  CHECK_THROWS_WITH(codec.decompress_add(shorter, right),
                    Catch::Contains("expected 33 terngrad payload bytes for 100 elements, got 32"));
  payload[8] = 0xFF;  // code 3
  CHECK_THROWS_WITH(codec.decompress_add(payload, right), Catch::Contains("invalid terngrad code"));
}

TEST_CASE("terngrad options default to no error feedback", "[compress][terngrad]") {
  const ComponentInfo info{"compressor", "terngrad", "", TerngradOptions::fields()};
  const auto options = TerngradOptions::fields().read(info.resolve(ComponentSpec{"compressor", "terngrad", {}}));
  CHECK_FALSE(options.error_feedback);
  TerngradCompressor terngrad(options);
  CHECK_FALSE(terngrad.summable());
  CHECK(terngrad.name() == "terngrad");
  CHECK_THROWS_AS(info.resolve(ComponentSpec{"compressor", "terngrad", {{"scale", 1.0}}}), ConfigError);
}
