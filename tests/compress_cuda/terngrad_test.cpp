// TernGrad's whole payload on the device: the CPU codec's header (n, max |g|, NaN when an element
// is NaN) and layout, each code from element i's device draw (element::splitmix64_at), the law the
// CPU codec follows (unbiased over seeds), and a decoder that agrees with the CPU's. Skipped
// without a GPU (kernels_test.cpp's main).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/cuda/kernels.hpp"
#include "engine/compress/element_math.hpp"
#include "engine/compress/terngrad.hpp"
#include "tests/compress_cuda/values.hpp"

using namespace laconic::compress;
using namespace laconic::compress::test;

namespace {

std::uint32_t word_at(const std::vector<std::uint8_t>& payload, std::size_t at) {
  std::uint32_t word;
  std::memcpy(&word, payload.data() + at, 4);
  return word;
}

/// The payload the device should write for `seed`, computed here from the shared element math.
std::vector<std::uint8_t> expected_payload(const std::vector<float>& g, std::uint64_t seed) {
  Payload cpu;
  TerngradCodec().compress(g, cpu);  // its header; its codes come from another stream
  float scale;
  std::memcpy(&scale, cpu.data() + 4, 4);
  std::vector<std::uint8_t> expected(cpu.size(), 0);
  std::memcpy(expected.data(), cpu.data(), 8);
  if (scale > 0.0f && std::isfinite(scale))
    for (std::size_t i = 0; i < g.size(); ++i) {
      const float u = element::uniform_of(element::splitmix64_at(seed, i));
      expected[8 + i / 4] |= static_cast<std::uint8_t>(element::terngrad_code(g[i], scale, u) << (2 * (i % 4)));
    }
  return expected;
}

}  // namespace

TEST_CASE("TernGrad's payload on the device: the CPU's header and layout, codes from the device stream", "[cuda]") {
  auto finite = awkward_values();
  finite.resize(970);
  auto with_nan = finite;
  with_nan[5] = std::numeric_limits<float>::quiet_NaN();
  auto with_inf = finite;
  with_inf[7] = -std::numeric_limits<float>::infinity();
  for (const auto* g : {&finite, &with_nan, &with_inf}) {
    const auto got = cuda::terngrad_compress(*g, 99);
    const auto expected = expected_payload(*g, 99);
    REQUIRE(got.size() == expected.size());
    CHECK(word_at(got, 0) == word_at(expected, 0));
    CHECK(word_at(got, 4) == word_at(expected, 4));
    CHECK(got == expected);
  }
  const auto large = normal_values((1 << 20) + 3, 8);
  CHECK(cuda::terngrad_compress(large, 5) == expected_payload(large, 5));
}

TEST_CASE("TernGrad on the device is unbiased over seeds, and decodes as the CPU decodes", "[cuda]") {
  const auto g = normal_values(1000, 9);
  float scale = 0;
  for (float x : g) scale = std::max(scale, std::fabs(x));
  const int seeds = 400;
  std::vector<double> sum(g.size(), 0.0);
  for (int seed = 0; seed < seeds; ++seed) {
    const auto payload = cuda::terngrad_compress(g, 1000 + seed);
    std::vector<float> dense(g.size(), 0.0f), dense_cpu(g.size(), 0.0f);
    cuda::terngrad_decode_add(payload, dense);
    TerngradCodec().decompress_add(payload, dense_cpu);
    REQUIRE(std::memcmp(dense.data(), dense_cpu.data(), 4 * g.size()) == 0);
    for (std::size_t i = 0; i < g.size(); ++i) sum[i] += dense[i];
  }
  // Each decoded value is +-scale with probability |g| / scale, else 0: the mean over the seeds
  // is within 6 standard errors of g for every one of the 1000 elements.
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double p = std::fabs(g[i]) / scale;
    const double standard_error = scale * std::sqrt(std::max(p * (1 - p), 1e-12) / seeds);
    worst = std::max(worst, std::fabs(sum[i] / seeds - g[i]) / standard_error);
  }
  INFO("largest deviation " << worst << " standard errors");
  CHECK(worst < 6.0);
}
