#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "engine/compress/random.hpp"
#include "engine/compress/randomk.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The obviously-correct reference for the shared-seed choice of step `step`: Floyd's algorithm
// with a std::set, driven by the same generator, then the set read in order.
std::vector<std::uint32_t> reference_indices(std::uint64_t run_seed, std::uint64_t step, std::size_t n, std::size_t k) {
  Rng rng(derive_seed(run_seed, step));
  std::set<std::uint32_t> chosen;
  for (std::size_t j = n - k; j < n; ++j) {
    const auto t = static_cast<std::uint32_t>(rng.below(j + 1));
    if (!chosen.insert(t).second) chosen.insert(static_cast<std::uint32_t>(j));
  }
  return {chosen.begin(), chosen.end()};
}

// g with everything outside `indices` zeroed.
std::vector<float> masked(const std::vector<float>& g, std::span<const std::uint32_t> indices) {
  std::vector<float> out(g.size(), 0.0f);
  for (auto i : indices) out[i] = g[i];
  return out;
}

std::vector<std::uint32_t> indices_vector(std::span<const std::uint32_t> s) { return {s.begin(), s.end()}; }

bool strictly_ascending_below(std::span<const std::uint32_t> indices, std::size_t n) {
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= n) return false;
    if (i > 0 && indices[i - 1] >= indices[i]) return false;
  }
  return true;
}

ComponentSpec randomk_spec(double ratio) {
  return {"compressor", "randomk", {{"ratio", ratio}, {"shared_seed", true}, {"error_feedback", true}}};
}

}  // namespace

TEST_CASE("randomk sends exactly ceil(ratio*n) distinct entries, ascending, unscaled", "[compress][randomk]") {
  for (bool shared : {true, false}) {
    for (std::size_t n : {1u, 7u, 100u, 1000u, 61706u}) {
      for (double ratio : {0.001, 0.01, 0.1, 0.5, 1.0}) {
        auto g = random_gradient(n, static_cast<unsigned>(n * 7 + ratio * 1000));
        const std::size_t k = topk_count(ratio, n);
        RandomkCodec codec(ratio, shared);
        codec.set_seed(11, 3);
        Payload payload;
        codec.compress(g, payload);
        CHECK(payload.size() == randomk_payload_bytes(k, shared));
        CHECK(payload.size() == (shared ? 4 * k : 8 + 8 * k));
        REQUIRE(codec.indices().size() == k);
        CHECK(strictly_ascending_below(codec.indices(), n));
        // Gaussian entries are never zero, so the decoded support is exactly the k indices.
        auto dense = decode(codec, payload, n);
        CHECK(dense == masked(g, codec.indices()));
        CHECK(std::count_if(dense.begin(), dense.end(), [](float v) { return v != 0.0f; }) ==
              static_cast<std::ptrdiff_t>(k));
      }
    }
  }
}

TEST_CASE("shared-seed randomk draws step t's indices from derive_seed(run_seed, t) alone", "[compress][randomk]") {
  const std::size_t n = 5000;
  RandomkCompressor randomk(RandomkOptions{0.02, true, false});
  randomk.set_seed(2024, 5);
  for (std::uint64_t step = 0; step < 10; ++step) {
    auto g = random_gradient(n, static_cast<unsigned>(step));
    Payload payload;
    randomk.compress(g, payload);
    REQUIRE(indices_vector(randomk.indices()) == reference_indices(2024, step, n, topk_count(0.02, n)));
    CHECK(decode(randomk, payload, n) == masked(g, randomk.indices()));
  }
}

TEST_CASE("with a shared seed all ranks choose the same indices, without one they differ", "[compress][randomk]") {
  const std::size_t n = 1000;
  for (bool shared : {true, false}) {
    RandomkCompressor a(RandomkOptions{0.01, shared, true});
    RandomkCompressor b(RandomkOptions{0.01, shared, true});
    RandomkCompressor a_again(RandomkOptions{0.01, shared, true});
    a.set_seed(77, 0);
    b.set_seed(77, 1);
    a_again.set_seed(77, 0);
    for (unsigned step = 0; step < 5; ++step) {
      Payload pa, pb, pc;
      a.compress(random_gradient(n, step), pa);
      b.compress(random_gradient(n, 100 + step), pb);  // other data, same seed
      a_again.compress(random_gradient(n, 200 + step), pc);
      CHECK(indices_vector(a.indices()) == indices_vector(a_again.indices()));  // reproducible per rank
      // 10 of 1000 twice alike by chance: probability 1/C(1000,10) < 1e-23.
      if (shared)
        CHECK(indices_vector(a.indices()) == indices_vector(b.indices()));
      else
        CHECK(indices_vector(a.indices()) != indices_vector(b.indices()));
    }
    // Successive steps choose afresh.
    Payload p;
    auto before = indices_vector(a.indices());
    a.compress(random_gradient(n, 9), p);
    CHECK(indices_vector(a.indices()) != before);
  }
}

TEST_CASE("randomk chooses each coordinate with frequency k/n", "[compress][randomk]") {
  // n = 100, k = 10, 20000 steps: each count has mean 2000 and, drawing without replacement,
  // variance 20000*0.1*0.9 = 1800. Pearson's statistic sum (O-E)^2/E then has mean 90 and is
  // at most chi-square(99)-like; we accept below 148.2, its 0.999 quantile. The run is
  // deterministic (fixed seed), so this cannot flake; it fails for a biased choice.
  const std::size_t n = 100, steps = 20000;
  for (bool shared : {true, false}) {
    RandomkCodec codec(0.1, shared);
    codec.set_seed(123, 2);
    std::vector<float> g(n, 1.0f);
    std::vector<double> counts(n, 0.0);
    Payload payload;
    for (std::size_t s = 0; s < steps; ++s) {
      codec.compress(g, payload);
      REQUIRE(codec.indices().size() == 10);
      REQUIRE(strictly_ascending_below(codec.indices(), n));
      for (auto i : codec.indices()) counts[i] += 1;
    }
    const double expected = static_cast<double>(steps) * 10 / n;
    double chi2 = 0;
    for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
    INFO("shared_seed=" << shared << " chi2=" << chi2);
    CHECK(chi2 < 148.2);
  }
}

TEST_CASE("randomk draws every k-subset with equal probability", "[compress][randomk]") {
  // n = 6, k = 3: C(6,3) = 20 subsets, 20000 steps, 1000 expected each. Pearson's statistic has
  // 19 degrees of freedom; we accept below 43.82, its 0.999 quantile (deterministic seed).
  const std::size_t n = 6, steps = 20000;
  RandomkCodec codec(0.5, true);
  codec.set_seed(5, 0);
  std::vector<float> g(n, 1.0f);
  std::map<std::vector<std::uint32_t>, double> counts;
  Payload payload;
  for (std::size_t s = 0; s < steps; ++s) {
    codec.compress(g, payload);
    counts[indices_vector(codec.indices())] += 1;
  }
  REQUIRE(counts.size() == 20);
  double chi2 = 0;
  for (const auto& [subset, c] : counts) chi2 += (c - 1000.0) * (c - 1000.0) / 1000.0;
  INFO("chi2=" << chi2);
  CHECK(chi2 < 43.82);
}

TEST_CASE("randomk with error feedback: sent plus residual equals what was fed in, every step",
          "[compress][randomk][error_feedback]") {
  const std::size_t n = 5000;
  for (bool shared : {true, false}) {
    RandomkCompressor randomk(RandomkOptions{0.01, shared, true});
    randomk.set_seed(31, 1);
    std::vector<float> previous_residual(n, 0.0f);
    for (unsigned step = 0; step < 20; ++step) {
      auto g = random_gradient(n, 100 + step);
      Payload payload;
      randomk.compress(g, payload);
      REQUIRE(payload.size() == randomk_payload_bytes(topk_count(0.01, n), shared));
      auto sent = decode(randomk, payload, n);
      auto residual = randomk.residual();
      REQUIRE(residual.size() == n);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(sent[i] + residual[i] == g[i] + previous_residual[i]);
      previous_residual.assign(residual.begin(), residual.end());
    }
  }
}

TEST_CASE("randomk without error feedback keeps no residual", "[compress][randomk]") {
  RandomkCompressor randomk(RandomkOptions{0.1, true, false});
  Payload payload;
  auto g = random_gradient(200, 4);
  randomk.compress(g, payload);
  CHECK(randomk.residual().empty());
  CHECK(decode(randomk, payload, 200) == masked(g, randomk.indices()));
}

TEST_CASE("randomk handles an empty gradient", "[compress][randomk]") {
  for (bool shared : {true, false}) {
    RandomkCodec codec(0.5, shared);
    Payload payload{1, 2, 3};
    codec.compress(std::span<const float>{}, payload);
    CHECK(payload.size() == randomk_payload_bytes(0, shared));
    std::vector<float> dense;
    codec.decompress_add(payload, dense);
    CHECK(codec.indices().empty());
  }
}

TEST_CASE("randomk options name the field and the valid range", "[compress][randomk]") {
  auto spec = randomk_spec(0.0);
  REQUIRE_THROWS_AS(RandomkOptions::fields().read(spec), ConfigError);
  REQUIRE_THROWS_WITH(RandomkOptions::fields().read(spec), "randomk.ratio must be in (0, 1], got 0");
  REQUIRE_THROWS_WITH(RandomkOptions::fields().read(randomk_spec(1.5)), "randomk.ratio must be in (0, 1], got 1.5");
  REQUIRE_THROWS_WITH(RandomkOptions::fields().read(randomk_spec(-0.1)), "randomk.ratio must be in (0, 1], got -0.1");
  CHECK(RandomkOptions::fields().read(randomk_spec(1.0)).ratio == 1.0);

  // The declared defaults are the struct's.
  ComponentInfo info{"compressor", "randomk", "", RandomkOptions::fields()};
  auto defaults = RandomkOptions::fields().read(info.resolve({"compressor", "randomk", {}}));
  CHECK(defaults.ratio == RandomkOptions{}.ratio);
  CHECK(defaults.shared_seed == RandomkOptions{}.shared_seed);
  CHECK(defaults.error_feedback == RandomkOptions{}.error_feedback);
  CHECK(defaults.ratio == 0.01);
  CHECK(defaults.shared_seed);
  CHECK(defaults.error_feedback);
}

TEST_CASE("a shared-seed randomk payload that does not match this step is refused", "[compress][randomk]") {
  RandomkCodec codec(0.1, true);
  Payload payload(40);
  std::vector<float> dense(100, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense), Catch::Contains("none has run yet"));
  codec.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a dense vector of 100 elements") && Catch::Contains("got 99"));
  payload.resize(36);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense),
                      Catch::Contains("expected 40 payload bytes for k=10, got 36"));
}

TEST_CASE("a private randomk payload for another length or with a bad index is refused", "[compress][randomk]") {
  RandomkCodec codec(0.1, false);
  Payload payload;
  codec.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  std::vector<float> dense(100, 0.0f);
  Payload truncated(payload.begin(), payload.end() - 1);
  REQUIRE_THROWS_WITH(codec.decompress_add(truncated, dense),
                      Catch::Contains("expected 88 payload bytes for k=10, got 87"));
  Payload tiny(5);
  REQUIRE_THROWS_WITH(codec.decompress_add(tiny, dense), Catch::Contains("at least 8 bytes, got 5"));
  const std::uint32_t bad = 100;
  std::memcpy(payload.data() + 8, &bad, 4);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense),
                      Catch::Contains("payload index 100 out of range for 100 elements"));
}
