#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

#include "engine/compress/block_randomk.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The obviously-correct reference: the offset is Rng(derive_seed(run_seed, step)).below(n-k+1),
// and g[offset, offset+k) is sent as is.
std::size_t reference_offset(std::uint64_t run_seed, std::uint64_t step, std::size_t n, std::size_t k) {
  Rng rng(derive_seed(run_seed, step));
  return static_cast<std::size_t>(rng.below(n - k + 1));
}

std::vector<float> reference_block(const std::vector<float>& g, std::size_t offset, std::size_t k) {
  std::vector<float> out(g.size(), 0.0f);
  for (std::size_t i = offset; i < offset + k; ++i) out[i] = g[i];
  return out;
}

ComponentSpec block_spec(double ratio) {
  return {"compressor", "block_randomk", {{"ratio", ratio}, {"error_feedback", true}}};
}

}  // namespace

TEST_CASE("block_randomk sends one contiguous block of ceil(ratio*n) elements, unscaled", "[compress][block_randomk]") {
  for (std::size_t n : {1u, 7u, 100u, 1000u, 61706u}) {
    for (double ratio : {0.001, 0.01, 0.1, 0.5, 1.0}) {
      const std::size_t k = topk_count(ratio, n);
      BlockRandomkCodec codec(ratio);
      codec.set_seed(42, 3);
      for (std::uint64_t step = 0; step < 3; ++step) {
        auto g = random_gradient(n, static_cast<unsigned>(n * 7 + ratio * 1000 + step));
        Payload payload;
        codec.compress(g, payload);
        CHECK(payload.size() == block_randomk_payload_bytes(k));
        CHECK(payload.size() == 4 * k);
        const std::size_t offset = reference_offset(42, step, n, k);
        CHECK(codec.offset() == offset);
        CHECK(codec.block_length() == k);
        REQUIRE(offset + k <= n);
        // Gaussian entries are never zero, so the decoded support is exactly the block.
        auto dense = decode(codec, payload, n);
        CHECK(dense == reference_block(g, offset, k));
        CHECK(std::count_if(dense.begin(), dense.end(), [](float v) { return v != 0.0f; }) ==
              static_cast<std::ptrdiff_t>(k));
      }
    }
  }
}

TEST_CASE("block_randomk starts cover [0, n-k] uniformly", "[compress][block_randomk]") {
  // n = 20, k = 5: 16 possible starts, 16000 steps, 1000 expected each. Pearson's statistic has
  // 15 degrees of freedom; we accept below 37.70, its 0.999 quantile. Deterministic seed, so it
  // cannot flake; it fails for a biased or truncated range.
  const std::size_t n = 20, steps = 16000;
  BlockRandomkCodec codec(0.25);
  REQUIRE(topk_count(0.25, n) == 5);
  codec.set_seed(8, 0);
  std::vector<float> g(n, 1.0f);
  std::vector<double> counts(n, 0.0);
  Payload payload;
  for (std::size_t s = 0; s < steps; ++s) {
    codec.compress(g, payload);
    REQUIRE(codec.offset() <= n - 5);
    counts[codec.offset()] += 1;
  }
  CHECK(counts[0] > 0);
  CHECK(counts[n - 5] > 0);
  double chi2 = 0;
  for (std::size_t s = 0; s <= n - 5; ++s) chi2 += (counts[s] - 1000.0) * (counts[s] - 1000.0) / 1000.0;
  INFO("chi2=" << chi2);
  CHECK(chi2 < 37.70);
}

TEST_CASE("block_randomk with ratio 1 sends the whole gradient", "[compress][block_randomk]") {
  BlockRandomkCodec codec(1.0);
  auto g = random_gradient(333, 2);
  Payload payload;
  codec.compress(g, payload);
  CHECK(codec.offset() == 0);
  CHECK(decode(codec, payload, g.size()) == g);
}

TEST_CASE("block_randomk ranks send the same block, a new one each step", "[compress][block_randomk][multirank]") {
  // Summed payloads decoding to the sum: contracts_test.cpp, for every summable compressor.
  const std::size_t n = 4000, workers = 3;
  std::vector<BlockRandomkCompressor> ranks;
  for (std::size_t r = 0; r < workers; ++r) {
    ranks.emplace_back(BlockRandomkOptions{0.03, true});
    ranks.back().set_seed(1234, static_cast<int>(r));
  }
  std::size_t previous_offset = n;
  int moved = 0;
  for (unsigned step = 0; step < 5; ++step) {
    for (std::size_t r = 0; r < workers; ++r) {
      Payload payload;
      ranks[r].compress(random_gradient(n, static_cast<unsigned>(step * 10 + r)), payload);
      CHECK(ranks[r].offset() == ranks[0].offset());
    }
    moved += ranks[0].offset() != previous_offset;
    previous_offset = ranks[0].offset();
  }
  CHECK(moved >= 4);  // 3881 possible starts: a repeat is a 1-in-3881 event per step
}

TEST_CASE("block_randomk with error feedback: sent plus residual equals what was fed in",
          "[compress][block_randomk][error_feedback]") {
  const std::size_t n = 5000;
  BlockRandomkCompressor block(BlockRandomkOptions{0.01, true});
  block.set_seed(31, 1);
  std::vector<float> previous_residual(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    auto g = random_gradient(n, 100 + step);
    Payload payload;
    block.compress(g, payload);
    REQUIRE(payload.size() == block_randomk_payload_bytes(topk_count(0.01, n)));
    auto sent = decode(block, payload, n);
    auto residual = block.residual();
    REQUIRE(residual.size() == n);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(sent[i] + residual[i] == g[i] + previous_residual[i]);
    previous_residual.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("block_randomk options name the field and the valid range", "[compress][block_randomk]") {
  REQUIRE_THROWS_AS(BlockRandomkOptions::fields().read(block_spec(0.0)), ConfigError);
  REQUIRE_THROWS_WITH(BlockRandomkOptions::fields().read(block_spec(0.0)),
                      "block_randomk.ratio must be in (0, 1], got 0");
  REQUIRE_THROWS_WITH(BlockRandomkOptions::fields().read(block_spec(2.0)),
                      "block_randomk.ratio must be in (0, 1], got 2");
  ComponentInfo info{"compressor", "block_randomk", "", BlockRandomkOptions::fields()};
  auto defaults = BlockRandomkOptions::fields().read(info.resolve({"compressor", "block_randomk", {}}));
  CHECK(defaults.ratio == 0.01);
  CHECK(defaults.error_feedback);
}

TEST_CASE("a block_randomk payload that does not match this step is refused", "[compress][block_randomk]") {
  BlockRandomkCodec codec(0.1);
  Payload payload(40);
  std::vector<float> dense(100, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense), Catch::Contains("none has run yet"));
  codec.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(101, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a dense vector of 100 elements") && Catch::Contains("got 101"));
  payload.push_back(0);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense),
                      Catch::Contains("expected 40 payload bytes for k=10, got 41"));
}
