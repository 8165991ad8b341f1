#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/compress/adaptive.hpp"
#include "engine/compress/huffman.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

AdaptiveOptions options(double fraction, unsigned probe, unsigned floor, bool huffman) {
  AdaptiveOptions o;
  o.sample_fraction = fraction;
  o.probe_bits = probe;
  o.floor_bits = floor;
  o.huffman = huffman;
  return o;
}

struct Reference {
  double entropy = 0;
  unsigned bits = 0;
  std::vector<std::uint16_t> indices;  // each element's bin
  std::vector<float> decoded;
};

// The obviously-correct reference of Algorithms 1 and 2, drawing its sample from `rng` the way
// the codec must: one element of each of s equal strata, in order.
Reference reference_adaptive(const std::vector<float>& g, const AdaptiveOptions& o, Rng& rng) {
  const std::size_t n = g.size();
  Reference r;
  if (n == 0) {
    r.bits = static_cast<unsigned>(o.floor_bits);
    return r;
  }
  const float lo = *std::min_element(g.begin(), g.end());
  const float hi = *std::max_element(g.begin(), g.end());
  // The bin rule of uniform {bits}, in the same float operations as the codec.
  auto bin = [&](float x, unsigned bits) -> std::uint32_t {
    if (!(hi > lo)) return 0;
    const float t = (x - lo) * (static_cast<float>(1u << bits) / (hi - lo));
    return std::min<std::uint32_t>(static_cast<std::uint32_t>(std::floor(t)), (1u << bits) - 1);
  };
  std::size_t samples = static_cast<std::size_t>(std::ceil(o.sample_fraction * double(n)));
  samples = std::min(std::max<std::size_t>(samples, 1), n);
  std::vector<double> histogram(std::size_t{1} << o.probe_bits, 0.0);
  for (std::size_t j = 0; j < samples; ++j) {
    const std::size_t start = j * n / samples, end = (j + 1) * n / samples;
    histogram[bin(g[start + rng.below(end - start)], static_cast<unsigned>(o.probe_bits))] += 1.0;
  }
  for (double h : histogram)
    if (h > 0) r.entropy -= h / double(samples) * std::log2(h / double(samples));
  // N = H + c, rounded up (entropies within 1e-9 of an integer count as it), at most 16.
  unsigned extra = 0;
  while (extra < r.entropy - 1e-9) ++extra;
  r.bits = std::min<unsigned>(16, static_cast<unsigned>(o.floor_bits) + extra);
  const float width = (hi - lo) / static_cast<float>(1u << r.bits);
  for (float x : g) {
    r.indices.push_back(static_cast<std::uint16_t>(bin(x, r.bits)));
    r.decoded.push_back(lo + (static_cast<float>(r.indices.back()) + 0.5f) * width);
  }
  return r;
}

std::vector<float> uniform_noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> g(n);
  for (auto& v : g) v = u(rng);
  return g;
}

// Constant 0.5 but for the two ends of the range: one bin holds nearly everything.
std::vector<float> nearly_constant(std::size_t n) {
  std::vector<float> g(n, 0.5f);
  g[n / 3] = 0.0f;
  g[2 * n / 3] = 1.0f;
  return g;
}

std::vector<float> laplace(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = (i % 2 ? 1.0f : -1.0f) * 1e-3f * e(rng);
  return g;
}

}  // namespace

TEST_CASE("adaptive matches a plain reference of the bit choice and the quantization", "[compress][adaptive]") {
  const std::vector<std::vector<float>> inputs{
      random_gradient(10000, 1), uniform_noise(5000, 2), nearly_constant(3000),        laplace(20000, 3),
      random_gradient(3, 4),     random_gradient(1, 5),  std::vector<float>(50, -2.0f)};
  const std::vector<AdaptiveOptions> settings{AdaptiveOptions{},          options(1.0, 4, 6, true),
                                              options(0.03, 1, 6, false), options(0.2, 8, 2, true),
                                              options(0.5, 16, 16, true), options(0.01, 12, 9, false)};
  for (const auto& o : settings) {
    AdaptiveCodec codec(o);
    codec.set_seed(42, 3);
    Rng rng(derive_seed(42, 2000 + 3));
    // Three rounds over all inputs: the sampling stream carries on from call to call.
    for (int round = 0; round < 3; ++round) {
      for (const auto& g : inputs) {
        Payload payload;
        codec.compress(g, payload);
        const Reference ref = reference_adaptive(g, o, rng);
        REQUIRE(codec.last_entropy() == Approx(ref.entropy).margin(1e-12));
        REQUIRE(codec.last_bits() == ref.bits);
        REQUIRE(payload[12] == ref.bits);
        REQUIRE(decode(codec, payload, g.size()) == ref.decoded);
        // Huffman-coded: the codebook and codes of the plain encoder, from the plain bins.
        if (payload[13] == 1)
          REQUIRE(std::vector<std::uint8_t>(payload.begin() + kAdaptiveHeaderBytes, payload.end()) ==
                  huffman_encode(ref.indices, std::size_t{1} << ref.bits));
      }
    }
  }
}

TEST_CASE("adaptive bits follow floor_bits + ceil(H), capped at 16", "[compress][adaptive]") {
  CHECK(adaptive_bits(0.0, 6) == 6);
  CHECK(adaptive_bits(1e-12, 6) == 6);
  CHECK(adaptive_bits(0.01, 6) == 7);
  CHECK(adaptive_bits(2.0, 6) == 8);
  CHECK(adaptive_bits(2.0 + 1e-12, 6) == 8);
  CHECK(adaptive_bits(3.99, 6) == 10);
  CHECK(adaptive_bits(4.0, 6) == 10);
  CHECK(adaptive_bits(16.0, 16) == 16);
  CHECK(adaptive_sample_size(0.03, 0) == 0);
  CHECK(adaptive_sample_size(0.03, 10) == 1);
  CHECK(adaptive_sample_size(0.03, 1000) == 30);
  CHECK(adaptive_sample_size(0.03, 1001) == 31);
  CHECK(adaptive_sample_size(1.0, 7) == 7);
}

TEST_CASE("adaptive error is at most half a bin width", "[compress][adaptive]") {
  for (const auto& g : {random_gradient(50000, 7), uniform_noise(20000, 8), laplace(30000, 9), nearly_constant(1000)}) {
    for (bool huffman : {true, false}) {
      AdaptiveCodec codec(options(0.03, 4, 6, huffman));
      Payload payload;
      codec.compress(g, payload);
      const auto d = decode(codec, payload, g.size());
      const float lo = *std::min_element(g.begin(), g.end());
      const float hi = *std::max_element(g.begin(), g.end());
      const float width = (hi - lo) / static_cast<float>(1u << codec.last_bits());
      // Half a bin, plus float rounding of (x - min) and of the centre: 1e-6 of the range.
      const float bound = 0.5f * width + 1e-6f * (hi - lo);
      for (std::size_t i = 0; i < g.size(); ++i) REQUIRE(std::fabs(d[i] - g[i]) <= bound);
    }
  }
}

TEST_CASE("adaptive with huffman decodes to the same values as without, in fewer bytes", "[compress][adaptive]") {
  for (const auto& g :
       {random_gradient(100000, 10), laplace(50000, 11), nearly_constant(5000), uniform_noise(30000, 12)}) {
    AdaptiveCodec coded(options(0.03, 4, 6, true)), packed(options(0.03, 4, 6, false));
    coded.set_seed(5, 1);
    packed.set_seed(5, 1);
    Payload with, without;
    coded.compress(g, with);
    packed.compress(g, without);
    REQUIRE(coded.last_bits() == packed.last_bits());
    CHECK(decode(coded, with, g.size()) == decode(packed, without, g.size()));
    CHECK(without.size() == kAdaptiveHeaderBytes + (g.size() * packed.last_bits() + 7) / 8);
    CHECK(with.size() <= without.size());
  }
  // Skewed inputs: Huffman is really used and clearly smaller. A Gaussian of 1e5 elements at
  // 9 bits codes in about 7.97 bits per element plus a 130-byte codebook (0.887 of packing);
  // 0.92 leaves room for other seeds.
  for (const auto& g : {random_gradient(100000, 13), laplace(100000, 14)}) {
    AdaptiveCodec coded(options(0.03, 4, 6, true)), packed(options(0.03, 4, 6, false));
    Payload with, without;
    coded.compress(g, with);
    packed.compress(g, without);
    CHECK(coded.last_parts().codebook_bytes > 0);
    CHECK(with[13] == 1);
    CHECK(static_cast<double>(with.size()) < 0.92 * static_cast<double>(without.size()));
  }
}

TEST_CASE("adaptive bits grow with the entropy of the input", "[compress][adaptive]") {
  auto bits_for = [](const std::vector<float>& g) {
    AdaptiveCodec codec(AdaptiveOptions{});
    Payload payload;
    codec.compress(g, payload);
    return codec.last_bits();
  };
  const std::size_t n = 100000;
  const unsigned constant = bits_for(nearly_constant(n));
  const unsigned gaussian = bits_for(random_gradient(n, 15));
  const unsigned uniform = bits_for(uniform_noise(n, 16));
  // One occupied probe bin: H = 0 unless the 3000 draws hit one of the 2 outliers (each draw
  // 2e-5, so about 6%, and then H < 0.01 gives one more bit).
  CHECK(constant <= 7);
  CHECK(constant >= 6);
  CHECK(gaussian > constant);
  CHECK(uniform > gaussian);
  // Uniform noise fills all 16 probe bins evenly: H ~ 4, the paper's ceiling M + c = 10.
  CHECK(uniform == 10);
}

TEST_CASE("an adaptive payload is the sum of its parts", "[compress][adaptive]") {
  for (std::size_t n : {0u, 1u, 2u, 7u, 100u, 10000u}) {
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<float> g = kind == 0   ? random_gradient(n, 17)
                             : kind == 1 ? std::vector<float>(n, 3.0f)
                                         : uniform_noise(n, 18);
      for (bool huffman : {true, false}) {
        AdaptiveCompressor c(options(0.03, 4, 6, huffman));
        Payload payload;
        c.compress(g, payload);
        const auto& parts = c.last_parts();
        CHECK(parts.header_bytes == 14);
        CHECK(payload.size() == parts.header_bytes + parts.codebook_bytes + (parts.code_bits + 7) / 8);
        CHECK(payload.size() == adaptive_payload_bytes(parts));
        if (payload[13] == 0) {
          CHECK(parts.codebook_bytes == 0);
          CHECK(parts.code_bits == n * c.last_bits());
        } else {
          CHECK(huffman);
          CHECK(parts.code_bits <= n * c.last_bits());
        }
        // Never larger than packing, and a constant vector costs a 5-byte codebook, no codes.
        CHECK(payload.size() <= kAdaptiveHeaderBytes + (n * c.last_bits() + 7) / 8);
        if (huffman && kind == 1 && n >= 7) CHECK(payload.size() == kAdaptiveHeaderBytes + 5);
        if (kind == 1) CHECK(decode(c, payload, n) == g);  // a constant decodes exactly
      }
    }
  }
}

TEST_CASE("adaptive sampling is private: it follows derive_seed(run_seed, 2000 + rank)", "[compress][adaptive]") {
  const auto g = random_gradient(20000, 19);
  AdaptiveCodec a(AdaptiveOptions{}), b(AdaptiveOptions{}), other_rank(AdaptiveOptions{});
  a.set_seed(7, 2);
  b.set_seed(7, 2);
  other_rank.set_seed(7, 3);
  Payload pa, pb, pc;
  a.compress(g, pa);
  b.compress(g, pb);
  other_rank.compress(g, pc);
  CHECK(pa == pb);
  CHECK(a.last_entropy() != other_rank.last_entropy());
  // Without set_seed it behaves as set_seed(0, 0).
  AdaptiveCodec unseeded(AdaptiveOptions{}), zero(AdaptiveOptions{});
  zero.set_seed(0, 0);
  unseeded.compress(g, pa);
  zero.compress(g, pb);
  CHECK(pa == pb);
}

TEST_CASE("adaptive with error feedback sends plus keeps what it was fed", "[compress][adaptive][error_feedback]") {
  const std::size_t n = 4000;
  auto with_feedback = options(0.03, 4, 6, true);
  with_feedback.error_feedback = true;
  AdaptiveCompressor c(with_feedback);
  c.set_seed(1, 0);
  AdaptiveCompressor plain(options(0.03, 4, 6, true));
  Payload unused;
  plain.compress(random_gradient(n, 29), unused);
  CHECK(plain.residual().empty());
  std::vector<float> previous(n, 0.0f);
  for (unsigned step = 0; step < 10; ++step) {
    const auto g = random_gradient(n, 30 + step);
    Payload payload;
    c.compress(g, payload);
    const auto sent = decode(c, payload, n);
    const auto residual = c.residual();
    REQUIRE(residual.size() == n);
    float lo = INFINITY, hi = -INFINITY;
    for (std::size_t i = 0; i < n; ++i) {
      lo = std::min(lo, g[i] + previous[i]);
      hi = std::max(hi, g[i] + previous[i]);
    }
    const float width = (hi - lo) / static_cast<float>(1u << c.last_bits());
    for (std::size_t i = 0; i < n; ++i) {
      // sent + residual = fed-in up to float rounding of the subtraction (1e-6 of the range);
      // the residual is one quantization error, at most half a bin.
      REQUIRE(std::fabs(sent[i] + residual[i] - (g[i] + previous[i])) <= 1e-6f * (hi - lo));
      REQUIRE(std::fabs(residual[i]) <= 0.5f * width + 1e-6f * (hi - lo));
    }
    previous.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("adaptive options name the field and the valid range", "[compress][adaptive]") {
  const ComponentInfo info{"compressor", "adaptive", "", AdaptiveOptions::fields()};
  auto make = [&](const std::string& field, Value value) {
    ComponentSpec spec{"compressor", "adaptive", {{field, value}}};
    return AdaptiveOptions::fields().read(info.resolve(spec));
  };
  const auto defaults = AdaptiveOptions::fields().read(info.resolve({"compressor", "adaptive", {}}));
  CHECK(defaults.sample_fraction == 0.03);
  CHECK(defaults.probe_bits == 4);
  CHECK(defaults.floor_bits == 6);
  CHECK(defaults.huffman);
  CHECK_FALSE(defaults.error_feedback);
  REQUIRE_THROWS_WITH(make("sample_fraction", 0.0), "adaptive.sample_fraction must be in (0, 1], got 0");
  REQUIRE_THROWS_WITH(make("sample_fraction", 1.5), "adaptive.sample_fraction must be in (0, 1], got 1.5");
  REQUIRE_THROWS_WITH(make("probe_bits", std::int64_t{0}), "adaptive.probe_bits must be in [1, 16], got 0");
  REQUIRE_THROWS_WITH(make("probe_bits", std::int64_t{17}), "adaptive.probe_bits must be in [1, 16], got 17");
  REQUIRE_THROWS_WITH(make("floor_bits", std::int64_t{0}), "adaptive.floor_bits must be in [1, 16], got 0");
  REQUIRE_THROWS_WITH(make("floor_bits", std::int64_t{17}), "adaptive.floor_bits must be in [1, 16], got 17");
  REQUIRE_THROWS_AS(make("probe_bits", 4.5), ConfigError);
  CHECK(make("sample_fraction", 1.0).sample_fraction == 1.0);
  CHECK(make("floor_bits", std::int64_t{16}).floor_bits == 16);
}

TEST_CASE("adaptive refuses payloads for another length and broken payloads", "[compress][adaptive]") {
  // 10000 elements: enough for Huffman to beat packing (at 3000 a 10-bit codebook does not).
  const std::size_t n = 10000;
  const auto g = random_gradient(n, 20);
  for (bool huffman : {true, false}) {
    AdaptiveCodec codec(options(0.03, 4, 6, huffman));
    Payload payload;
    codec.compress(g, payload);
    CHECK(payload[13] == (huffman ? 1 : 0));
    std::vector<float> wrong(n - 1, 0.0f);
    REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                        Catch::Contains("expected a payload for 9999 elements, got one for 10000"));
    std::vector<float> dense(n, 0.0f);
    // Every proper prefix and one extra byte are refused, and nothing is added on refusal.
    for (std::size_t cut = 0; cut < payload.size(); cut += (cut < 64 ? 1 : 37)) {
      const Payload prefix(payload.begin(), payload.begin() + cut);
      REQUIRE_THROWS_AS(codec.decompress_add(prefix, dense), InvariantError);
    }
    auto longer = payload;
    longer.push_back(0);
    REQUIRE_THROWS_AS(codec.decompress_add(longer, dense), InvariantError);
    CHECK(dense == std::vector<float>(n, 0.0f));
    auto bad = payload;
    bad[12] = 0;
    REQUIRE_THROWS_WITH(codec.decompress_add(bad, dense), Catch::Contains("got 0"));
    bad[12] = 17;
    REQUIRE_THROWS_WITH(codec.decompress_add(bad, dense), Catch::Contains("got 17"));
    bad = payload;
    bad[13] = 2;
    REQUIRE_THROWS_WITH(codec.decompress_add(bad, dense), Catch::Contains("unknown adaptive coding 2"));
    if (huffman) {
      bad = payload;
      bad[12] = static_cast<std::uint8_t>(bad[12] - 1);  // codebook alphabet no longer 2^bits
      REQUIRE_THROWS_WITH(codec.decompress_add(bad, dense), Catch::Contains("expected a codebook"));
    }
  }
}

TEST_CASE("adaptive's header holds the gradient's min and max wherever they are, NaN wherever one is",
          "[compress][adaptive]") {
  AdaptiveCodec codec{AdaptiveOptions{}};
  Payload payload;
  const auto header_float = [&](std::size_t at) {
    float f;
    std::memcpy(&f, payload.data() + at, 4);
    return f;
  };
  // Sizes around the eight lanes of the min/max pass, the extremes at every position.
  for (std::size_t n = 1; n <= 41; ++n)
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<float> g(n);
      for (std::size_t i = 0; i < n; ++i) g[i] = 0.25f * static_cast<float>((i * 7) % 5);
      g[at] = -3.0f;
      g[n - 1 - at] = at == n - 1 - at ? -3.0f : 5.0f;
      codec.compress(g, payload);
      INFO("n=" << n << " at=" << at);
      REQUIRE(header_float(4) == *std::min_element(g.begin(), g.end()));
      REQUIRE(header_float(8) == *std::max_element(g.begin(), g.end()));
      g[at] = std::nanf("");
      codec.compress(g, payload);
      REQUIRE(std::isnan(header_float(4)));
      REQUIRE(std::isnan(header_float(8)));
    }
}

TEST_CASE("adaptive handles empty, NaN and one-element gradients", "[compress][adaptive]") {
  AdaptiveCompressor c(AdaptiveOptions{});
  CHECK(c.name() == "adaptive");
  CHECK_FALSE(c.summable());
  Payload payload;
  c.compress(std::vector<float>{}, payload);
  CHECK(payload.size() == kAdaptiveHeaderBytes);
  CHECK(c.last_bits() == 6);
  CHECK(decode(c, payload, 0).empty());
  auto g = random_gradient(100, 21);
  g[40] = std::nanf("");
  c.compress(g, payload);
  for (float v : decode(c, payload, 100)) CHECK(std::isnan(v));
  c.compress(std::vector<float>{-1.25f}, payload);
  CHECK(decode(c, payload, 1) == std::vector<float>{-1.25f});
}
