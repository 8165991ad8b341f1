// Top-k and block-random-k on the device against the CPU codecs: the same payload bytes (Top-k's
// selection with NaN, infinities and ties at the threshold, at several sizes and ratios, the
// CPU's sampled filter path included, each case on the device's direct, prefiltered and automatic
// paths), the same residual after error feedback over several steps, and the same decoded sums.
// Skipped without a GPU (kernels_test.cpp's main).
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "engine/compress/block_randomk.hpp"
#include "engine/compress/cuda/kernels.hpp"
#include "engine/compress/topk.hpp"
#include "tests/compress_cuda/values.hpp"

using namespace laconic::compress;
using namespace laconic::compress::test;

namespace {

Payload cpu_topk(const std::vector<float>& values, double ratio) {
  TopkCodec codec(ratio);
  Payload payload;
  codec.compress(values, payload);
  return payload;
}

/// Values from {-2, -1, 0, 1, 2}: every threshold is a tie among thousands.
std::vector<float> tied_values(std::size_t n) {
  std::mt19937 rng(3);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 5) - 2);
  return v;
}

/// Normal values with NaNs, infinities, zeros and subnormals strewn among them.
std::vector<float> normal_with_specials(std::size_t n) {
  std::vector<float> v = normal_values(n, 6);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            0.0f,
                            std::numeric_limits<float>::denorm_min()};
  for (std::size_t i = 0; i < n; i += 977) v[i] = specials[(i / 977) % 6];
  return v;
}

bool same_bits_as_span(const std::vector<float>& a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), 4 * a.size()) == 0;
}

}  // namespace

TEST_CASE("Top-k on the device sends the CPU codec's bytes, NaN and ties included", "[cuda]") {
  struct Case {
    const char* what;
    std::vector<float> values;
    double ratio;
  };
  const std::vector<Case> cases = {{"awkward 1%", awkward_values(), 0.01},
                                   {"awkward 10%", awkward_values(), 0.1},
                                   {"awkward 50%", awkward_values(), 0.5},
                                   {"awkward all", awkward_values(), 1.0},
                                   {"ties 1%", tied_values(100003), 0.01},
                                   {"ties 30%", tied_values(100003), 0.3},
                                   {"normal 1%", normal_values((1 << 20) + 5, 1), 0.01},
                                   {"normal 0.1%", normal_values((1 << 20) + 5, 2), 0.001},
                                   {"one element", {-3.5f}, 1.0},
                                   {"ties 1%, long", tied_values((1 << 19) + 3), 0.01},
                                   {"NaN and infinities 1%, long", normal_with_specials((1 << 18) + 7), 0.01},
                                   {"normal 12.5%", normal_values(1 << 18, 7), 0.125},
                                   // Long enough for the automatic path's prefilter (from 2^22).
                                   {"normal 1%, 2^22 + 5", normal_values((1 << 22) + 5, 8), 0.01}};
  for (const Case& c : cases) {
    INFO(c.what);
    const std::size_t k = topk_count(c.ratio, c.values.size());
    const Payload expected = cpu_topk(c.values, c.ratio);
    for (auto path : {cuda::TopkPath::automatic, cuda::TopkPath::direct, cuda::TopkPath::prefiltered}) {
      INFO("path " << static_cast<int>(path));
      const std::vector<std::uint8_t> got = cuda::topk(c.values, k, path);
      REQUIRE(got.size() == expected.size());
      CHECK(got == expected);
    }
  }
}

TEST_CASE("Top-k with error feedback on the device keeps the CPU compressor's payloads and residual", "[cuda]") {
  const std::size_t n = 300007;
  for (auto [ratio, path] : {std::pair{0.01, cuda::TopkPath::automatic}, std::pair{0.01, cuda::TopkPath::direct},
                             std::pair{0.2, cuda::TopkPath::automatic}, std::pair{0.2, cuda::TopkPath::prefiltered}}) {
    INFO("ratio " << ratio << ", path " << static_cast<int>(path));
    TopkCompressor cpu(TopkOptions{ratio, true});
    std::vector<float> residual(n, 0.0f);
    for (unsigned step = 0; step < 3; ++step) {
      INFO("step " << step);
      const auto gradient = normal_values(n, 10 + step);
      Payload expected;
      cpu.compress(gradient, expected);
      const auto got = cuda::topk_with_feedback(gradient, residual, topk_count(ratio, n), path);
      CHECK(got == expected);
      CHECK(same_bits_as_span(residual, cpu.residual()));
    }
  }
}

TEST_CASE("a Top-k payload adds into a dense vector on the device as on the CPU", "[cuda]") {
  const auto values = normal_values(50021, 4);
  const Payload payload = cpu_topk(values, 0.05);
  std::vector<float> expected = normal_values(values.size(), 5), dense = expected;
  TopkCodec(0.05).decompress_add(payload, expected);
  cuda::sparse_pairs_add(payload, dense);
  CHECK(same_bits_as_span(dense, expected));
}

TEST_CASE("block-random-k with error feedback on the device keeps the CPU compressor's block and residual", "[cuda]") {
  const std::size_t n = 100003;
  BlockRandomkCompressor cpu(BlockRandomkOptions{0.05, true});
  cpu.set_seed(42, 0);
  std::vector<float> residual(n, 0.0f);
  for (unsigned step = 0; step < 3; ++step) {
    INFO("step " << step);
    const auto gradient = normal_values(n, 20 + step);
    Payload expected;
    cpu.compress(gradient, expected);
    const std::size_t offset = cpu.codec().offset(), k = cpu.codec().block_length();
    const auto block = cuda::block_with_feedback(gradient, residual, offset, k);
    REQUIRE(expected.size() == 4 * k);
    CHECK(std::memcmp(block.data(), expected.data(), expected.size()) == 0);
    CHECK(same_bits_as_span(residual, cpu.residual()));
    std::vector<float> dense = normal_values(n, 30 + step), dense_cpu = dense;
    cpu.decompress_add(expected, dense_cpu);
    cuda::block_add(block, offset, dense);
    CHECK(same_bits_as_span(dense, dense_cpu));
  }
}
