#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/compress/builtin.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The obviously-correct reference: sort all (magnitude, index) pairs, keep the first k.
std::vector<float> reference_topk(const std::vector<float>& g, std::size_t k) {
  std::vector<std::size_t> idx(g.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
  std::vector<float> out(g.size(), 0.0f);
  for (std::size_t i = 0; i < k; ++i) out[idx[i]] = g[idx[i]];
  return out;
}

}  // namespace

TEST_CASE("topk keeps exactly ceil(ratio*n) entries, the largest ones", "[compress][topk]") {
  for (std::size_t n : {1u, 7u, 100u, 1000u, 61706u}) {
    for (double ratio : {0.001, 0.01, 0.1, 0.5, 1.0}) {
      auto g = random_gradient(n, static_cast<unsigned>(n * 7 + ratio * 1000));
      const std::size_t k = topk_count(ratio, n);
      CHECK(k == std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(ratio * n))));
      TopkCodec codec(ratio);
      Payload payload;
      codec.compress(g, payload);
      auto dense = decode(codec, payload, n);
      CHECK(dense == reference_topk(g, k));
      CHECK(std::count_if(dense.begin(), dense.end(), [](float v) { return v != 0.0f; }) ==
            static_cast<std::ptrdiff_t>(k));
    }
  }
}

TEST_CASE("a topk payload is 8 header bytes plus 8 bytes per kept entry", "[compress][topk]") {
  for (std::size_t n : {10u, 1000u, 12345u}) {
    TopkCodec codec(0.03);
    Payload payload;
    codec.compress(random_gradient(n, 3), payload);
    const std::size_t k = topk_count(0.03, n);
    CHECK(payload.size() == 8 + k * (4 + 4));
    CHECK(payload.size() == topk_payload_bytes(k));
  }
}

TEST_CASE("with error feedback, sent plus residual equals what was fed in, every step",
          "[compress][topk][error_feedback]") {
  const std::size_t n = 5000;
  TopkCompressor topk(TopkOptions{0.01, true});
  std::vector<float> previous_residual(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    auto g = random_gradient(n, 100 + step);
    Payload payload;
    topk.compress(g, payload);
    auto sent = decode(topk, payload, n);
    auto residual = topk.residual();
    REQUIRE(residual.size() == n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(sent[i] + residual[i] == g[i] + previous_residual[i]);
    previous_residual.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("error feedback eventually sends every coordinate", "[compress][topk][error_feedback]") {
  // A constant gradient: without feedback the same k coordinates win forever.
  const std::size_t n = 200;
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = 1.0f + 0.001f * static_cast<float>(i);
  TopkCompressor with(TopkOptions{0.05, true}), without(TopkOptions{0.05, false});
  std::vector<bool> seen_with(n), seen_without(n);
  for (int step = 0; step < 40; ++step) {
    Payload p;
    with.compress(g, p);
    auto d = decode(with, p, n);
    without.compress(g, p);
    auto e = decode(without, p, n);
    for (std::size_t i = 0; i < n; ++i) {
      seen_with[i] = seen_with[i] || d[i] != 0;
      seen_without[i] = seen_without[i] || e[i] != 0;
    }
  }
  CHECK(std::count(seen_with.begin(), seen_with.end(), true) == static_cast<std::ptrdiff_t>(n));
  CHECK(std::count(seen_without.begin(), seen_without.end(), true) == 10);
}

TEST_CASE("topk options name the field and the valid range", "[compress][topk]") {
  auto registry = builtin_compressors();
  ComponentSpec spec{"compressor", "topk", {{"ratio", 1.5}}};
  REQUIRE_THROWS_WITH(registry.create(spec), "topk.ratio must be in (0, 1], got 1.5");
  spec.fields["ratio"] = 0.0;
  REQUIRE_THROWS_AS(registry.create(spec), ConfigError);
}

TEST_CASE("a payload for another length is refused with both sizes", "[compress][topk]") {
  TopkCodec codec(0.1);
  Payload payload;
  codec.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
}

TEST_CASE("topk keeps exactly k entries when magnitudes tie, the lowest indices first", "[compress][topk]") {
  std::vector<float> g(100, 1.0f);
  g[7] = -1.0f;           // same magnitude, other sign
  g[50] = 3.0f;           // the one clear winner
  TopkCodec codec(0.05);  // k = 5
  Payload payload;
  codec.compress(g, payload);
  auto dense = decode(codec, payload, g.size());
  std::vector<float> expected(100, 0.0f);
  expected[50] = 3.0f;
  expected[0] = expected[1] = expected[2] = 1.0f;
  expected[3] = 1.0f;
  CHECK(dense == expected);
}

TEST_CASE("topk sends a NaN on instead of hiding it in the residual", "[compress][topk]") {
  auto g = random_gradient(1000, 9);
  g[123] = std::nanf("");
  TopkCodec codec(0.01);
  Payload payload;
  codec.compress(g, payload);
  auto dense = decode(codec, payload, g.size());
  CHECK(std::isnan(dense[123]));
  CHECK(payload.size() == topk_payload_bytes(10));
}

TEST_CASE("topk on a million elements matches the reference, also when the sample misleads", "[compress][topk]") {
  const std::size_t n = 1 << 20;
  auto g = random_gradient(n, 21);
  // Every 256th element (where the threshold sample looks) is huge: the guessed threshold lets
  // fewer than k through, and the codec must fall back to selecting among all elements.
  auto spiky = g;
  for (std::size_t i = 0; i < n; i += 256) spiky[i] = 100.0f + static_cast<float>(i);
  // Every 256th element is zero: the guess is 0 and every element is a candidate.
  auto holes = g;
  for (std::size_t i = 0; i < n; i += 256) holes[i] = 0.0f;
  for (const auto* input : {&g, &spiky, &holes}) {
    for (double ratio : {0.001, 0.01, 0.05}) {
      TopkCodec codec(ratio);
      Payload payload;
      codec.compress(*input, payload);
      REQUIRE(decode(codec, payload, n) == reference_topk(*input, topk_count(ratio, n)));
    }
  }
}
