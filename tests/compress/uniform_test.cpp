#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "compress_test_support.hpp"
#include "engine/compress/bitpack.hpp"
#include "engine/compress/uniform.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::isas_on_this_cpu;
using laconic::testing::random_gradient;

namespace {

// The bin of x in double precision, as the method defines it.
std::uint32_t reference_bin(float x, float lo, float hi, unsigned bits) {
  const double bins = std::ldexp(1.0, static_cast<int>(bits));
  const double width = (double(hi) - double(lo)) / bins;
  const double index = std::floor((double(x) - double(lo)) / width);
  return static_cast<std::uint32_t>(std::clamp(index, 0.0, bins - 1));
}

float centre(std::uint32_t index, float lo, float hi, unsigned bits) {
  return lo + (static_cast<float>(index) + 0.5f) * uniform_bin_width(lo, hi, bits);
}

UniformOptions uniform_options_from(std::map<std::string, Value> fields) {
  const ComponentInfo info{"compressor", "uniform", "", UniformOptions::fields()};
  return UniformOptions::fields().read(info.resolve(ComponentSpec{"compressor", "uniform", std::move(fields)}));
}

}  // namespace

TEST_CASE("uniform sends each element's bin and decodes its centre, as the reference", "[compress][uniform]") {
  for (unsigned bits : {1u, 2u, 3u, 8u, 12u, 16u}) {
    for (std::size_t n : {2u, 7u, 1000u, 61706u}) {
      const auto g = random_gradient(n, bits * 100 + static_cast<unsigned>(n));
      const auto [lo_it, hi_it] = std::minmax_element(g.begin(), g.end());
      const float lo = *lo_it, hi = *hi_it;
      const float width = uniform_bin_width(lo, hi, bits);
      UniformCodec codec(bits);
      Payload payload;
      codec.compress(g, payload);
      const auto q = decode(codec, payload, n);
      std::size_t edge_cases = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bin = reference_bin(g[i], lo, hi, bits);
        if (q[i] == centre(bin, lo, hi, bits)) continue;
        // Multiplying by 1/width instead of dividing may put an element within rounding of a bin
        // edge into the neighbouring bin. Anything else is a bug.
        const double edge = double(lo) + double(width) * std::round((double(g[i]) - lo) / width);
        INFO("bits=" << bits << " n=" << n << " i=" << i << " x=" << g[i] << " got " << q[i]);
        REQUIRE(std::fabs(g[i] - edge) <=
                4 * std::numeric_limits<float>::epsilon() * std::max(std::fabs(lo), std::fabs(hi)));
        REQUIRE((q[i] == centre(bin + 1, lo, hi, bits) || q[i] == centre(bin - 1, lo, hi, bits)));
        ++edge_cases;
      }
      CHECK(edge_cases <= 1);
    }
  }
}

TEST_CASE("uniform's error is at most half a bin width", "[compress][uniform]") {
  for (unsigned bits = 1; bits <= 16; ++bits) {
    auto g = random_gradient(20000, bits);
    g[17] = 40.0f;  // a long tail stretches the bins
    UniformCodec codec(bits);
    Payload payload;
    codec.compress(g, payload);
    const auto q = decode(codec, payload, g.size());
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    const double width = uniform_bin_width(*lo, *hi, bits);
    // width/2, plus float rounding of the centre and of the bin choice near an edge: a few ulps
    // of the largest magnitude.
    const double slack = 4 * std::numeric_limits<float>::epsilon() * std::max(std::fabs(*lo), std::fabs(*hi));
    double worst = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(double(q[i]) - g[i]));
    INFO("bits=" << bits << " width=" << width << " worst=" << worst);
    CHECK(worst <= width / 2 + slack);
    if (bits <= 8) CHECK(worst >= width / 4);  // the bound is not vacuous
  }
}

TEST_CASE("a uniform payload is 12 header bytes plus packed bits per element", "[compress][uniform]") {
  for (unsigned bits : {1u, 3u, 8u, 13u, 16u}) {
    UniformCodec codec(bits);
    for (std::size_t n : {0u, 1u, 5u, 1001u, 61706u}) {
      Payload payload;
      codec.compress(random_gradient(n, 9), payload);
      CHECK(payload.size() == 12 + (n * bits + 7) / 8);
      CHECK(payload.size() == uniform_payload_bytes(n, bits));
    }
  }
}

TEST_CASE("constant input decodes exactly", "[compress][uniform]") {
  for (float c : {0.0f, -3.5f, 1e-20f, 123456.0f}) {
    UniformCodec codec(4);
    Payload payload;
    const std::vector<float> g(33, c);
    codec.compress(g, payload);
    CHECK(decode(codec, payload, g.size()) == g);
    codec.compress(std::vector<float>{c}, payload);
    CHECK(decode(codec, payload, 1) == std::vector<float>{c});
  }
}

TEST_CASE("uniform is deterministic and shows a NaN or inf", "[compress][uniform]") {
  const auto g = random_gradient(1000, 4);
  UniformCodec codec(8);
  Payload a, b;
  codec.compress(g, a);
  codec.compress(g, b);
  CHECK(a == b);

  auto bad = g;
  bad[10] = std::nanf("");
  codec.compress(bad, a);
  for (float v : decode(codec, a, g.size())) REQUIRE(std::isnan(v));
  bad[10] = INFINITY;
  codec.compress(bad, a);
  for (float v : decode(codec, a, g.size())) REQUIRE_FALSE(std::isfinite(v));
}

TEST_CASE("uniform refuses payloads of the wrong length or size", "[compress][uniform]") {
  UniformCodec codec(5);
  Payload payload;
  codec.compress(random_gradient(100, 3), payload);
  std::vector<float> wrong(101, 0.0f), right(100, 0.0f);
  CHECK_THROWS_WITH(codec.decompress_add(payload, wrong),
                    Catch::Contains("expected a payload for 101 elements, got one for 100"));
  Payload shorter(payload.begin(), payload.end() - 1);
  CHECK_THROWS_WITH(codec.decompress_add(shorter, right),
                    Catch::Contains("expected 75 uniform payload bytes for 100 elements of 5 bits, got 74"));
}

TEST_CASE("uniform options name the field, the value and the valid range", "[compress][uniform]") {
  const auto defaults = uniform_options_from({});
  CHECK(defaults.bits == 8);
  CHECK_FALSE(defaults.error_feedback);
  CHECK(uniform_options_from({{"bits", std::int64_t{16}}}).bits == 16);
  CHECK_THROWS_WITH(uniform_options_from({{"bits", std::int64_t{0}}}), "uniform.bits must be in [1, 16], got 0");
  CHECK_THROWS_WITH(uniform_options_from({{"bits", std::int64_t{17}}}), "uniform.bits must be in [1, 16], got 17");
  UniformCompressor uniform(defaults);
  CHECK_FALSE(uniform.summable());
}

TEST_CASE("uniform's AVX2 and AVX-512 loops give the baseline's payloads and sums", "[compress][uniform]") {
  for (Isa isa : isas_on_this_cpu())
    for (unsigned bits : {1u, 3u, 8u, 12u, 16u}) {
      for (std::size_t n : {1u, 7u, 2049u, 61706u}) {
        auto g = random_gradient(n, bits + static_cast<unsigned>(n));
        // Elements on bin edges: lo + k * width for a few k, where a rounding slip would show.
        const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
        const float width = uniform_bin_width(*lo, *hi, bits);
        for (std::size_t k = 0; k + 2 < n && k < 64; ++k)
          if (g.begin() + k != lo && g.begin() + k != hi) g[k] = *lo + float(k) * width;
        UniformCodec baseline(bits, Isa::Baseline), fast(bits, isa);
        Payload a, b;
        baseline.compress(g, a);
        fast.compress(g, b);
        INFO(isa_name(isa) << " bits=" << bits << " n=" << n);
        REQUIRE(a == b);
        // And the bins are the double-precision reference's, edges included.
        const float lo_sent = *std::min_element(g.begin(), g.end());
        const float hi_sent = *std::max_element(g.begin(), g.end());
        std::vector<std::uint32_t> bins(n);
        unpack_bits(std::span<const std::uint8_t>(a).subspan(12), bits, bins);
        const double bins_per_unit = std::ldexp(1.0, int(bits)) / (double(hi_sent) - lo_sent);
        for (std::size_t i = 0; i < n; ++i) {
          const double t = (double(g[i]) - lo_sent) * bins_per_unit;
          REQUIRE(bins[i] == std::min<std::uint32_t>(std::uint32_t(t), (1u << bits) - 1));
        }
        const auto da = decode(baseline, a, n), db = decode(fast, a, n);
        REQUIRE(std::memcmp(da.data(), db.data(), n * sizeof(float)) == 0);
      }
    }
}
