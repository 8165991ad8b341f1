// The per-element math the CPU codecs and the CUDA kernels share (engine/compress/element_math.hpp),
// checked here on every run: fp16 and bf16 against their definitions (every fp16 value back to
// itself, rounding to nearest even at the halfway points, NaN and overflow), the sign bit's
// convention, and the stochastic rounding of TernGrad and QSGD against their promise: over a
// uniform grid of draws, the mean decoded value is the input (unbiased), each draw gives one of
// the two neighbouring levels.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/compress/element_math.hpp"

using namespace laconic::compress;

namespace {

// u = (k + 0.5) / n for k < n: a grid whose mean of any step function of u is its integral, up to 1/n.
template <class F>
double mean_over_draws(int n, F decoded) {
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += decoded((static_cast<float>(k) + 0.5f) / static_cast<float>(n));
  return sum / n;
}

}  // namespace

TEST_CASE("every fp16 value converts to a float and back to itself", "[compress][element]") {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float value = element::fp16_value(bits);
    const bool nan = (bits & 0x7C00u) == 0x7C00u && (bits & 0x03FFu) != 0;
    INFO(b);
    if (nan) {
      CHECK(std::isnan(value));
      CHECK(element::fp16_bits(value) == (bits | 0x0200u));  // quiet bit set, payload kept
    } else {
      CHECK(element::fp16_bits(value) == bits);
    }
  }
}

TEST_CASE("fp16 rounds to nearest even, overflows to infinity and keeps subnormals", "[compress][element]") {
  CHECK(element::fp16_bits(1.0f) == 0x3C00u);
  CHECK(element::fp16_bits(-2.0f) == 0xC000u);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even significand, 1.
  CHECK(element::fp16_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00u);
  // 1 + 3 x 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
  CHECK(element::fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02u);
  CHECK(element::fp16_bits(65504.0f) == 0x7BFFu);
  CHECK(element::fp16_bits(65520.0f) == 0x7C00u);  // halfway to 2^16: infinity
  CHECK(element::fp16_bits(std::numeric_limits<float>::infinity()) == 0x7C00u);
  CHECK(element::fp16_bits(std::ldexp(1.0f, -24)) == 0x0001u);  // the smallest subnormal
  CHECK(element::fp16_bits(std::ldexp(1.0f, -25)) == 0x0000u);  // halfway to it: even zero
  CHECK(element::fp16_value(0x0001u) == std::ldexp(1.0f, -24));
  CHECK(element::fp16_bits(-0.0f) == 0x8000u);
}

TEST_CASE("bf16 keeps the high half, rounded to nearest even", "[compress][element]") {
  CHECK(element::bf16_bits(1.0f) == 0x3F80u);
  CHECK(element::bf16_bits(element::float_of(0x3F808000u)) == 0x3F80u);  // tie, even stays
  CHECK(element::bf16_bits(element::float_of(0x3F818000u)) == 0x3F82u);  // tie, odd rounds up
  CHECK(element::bf16_bits(element::float_of(0x3F808001u)) == 0x3F81u);  // above the tie
  CHECK(element::bf16_value(0x3F80u) == 1.0f);
  const float nan = element::float_of(0x7F800001u);  // payload only in the low half
  CHECK(std::isnan(element::bf16_value(element::bf16_bits(nan))));
}

TEST_CASE("a sign bit is set for values below zero, the others count as positive", "[compress][element]") {
  CHECK(element::negative_bit(-1.0f) == 1);
  CHECK(element::negative_bit(1.0f) == 0);
  CHECK(element::negative_bit(-0.0f) == 0);
  CHECK(element::negative_bit(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(element::sign_bit(-0.0f) == 1);  // the raw bit, for codes that carry it
  CHECK(element::bit_byte(13) == 1);
  CHECK(element::bit_in_byte(13) == 5);
}

TEST_CASE("a uniform from a generator's output is its top 24 bits in [0, 1)", "[compress][element]") {
  CHECK(element::uniform_of(0) == 0.0f);
  CHECK(element::uniform_of(~std::uint64_t{0}) == 1.0f - std::ldexp(1.0f, -24));
  CHECK(element::uniform_of(std::uint64_t{1} << 63) == 0.5f);
  CHECK(element::uniform_of((std::uint64_t{1} << 40) - 1) == 0.0f);  // the low 40 bits do not count
}

TEST_CASE("TernGrad's code is unbiased: scale x P(kept) = |g|, with g's sign", "[compress][element]") {
  const float scale = 2.0f;
  for (float g : {0.0f, 0.3f, -0.7f, 1.25f, -2.0f, 2.0f}) {
    INFO(g);
    const double mean = mean_over_draws(
        1 << 16, [&](float u) { return element::terngrad_value(element::terngrad_code(g, scale, u), scale); });
    CHECK(mean == Approx(g).margin(1e-4));
  }
  CHECK(element::terngrad_code(2.0f, 2.0f, 0.9999999f) == 1);  // the largest: always kept
  CHECK(element::terngrad_code(-2.0f, 2.0f, 0.0f) == 2);
  CHECK(element::terngrad_code(0.0f, 2.0f, 0.0f) == 0);
  CHECK(std::isnan(element::terngrad_value(0, std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("QSGD's level is one of r's two neighbours, r on average, with x's sign", "[compress][element]") {
  const float s = 4.0f, norm = 3.0f, scale = s / norm, unit = norm / s;
  for (float x : {0.0f, 0.1f, -0.8f, 1.5f, -2.25f, 3.0f}) {
    INFO(x);
    const float r = std::fabs(x) * scale;
    const double mean = mean_over_draws(1 << 16, [&](float u) {
      const std::uint32_t code = element::qsgd_code(x, u, scale, s);
      const std::uint32_t level = code >> 1;
      CHECK((level == static_cast<std::uint32_t>(std::floor(r)) || level == static_cast<std::uint32_t>(std::ceil(r))));
      return element::qsgd_value(code, unit);
    });
    CHECK(mean == Approx(x).margin(1e-4));
  }
  // A level of 0 carries no sign (so that -0 and +0 code alike); the largest element is level s.
  CHECK(element::qsgd_code(-0.0f, 0.5f, scale, s) == 0);
  CHECK(element::qsgd_code(-3.0f, 0.0f, scale, s) == ((4u << 1) | 1u));
  CHECK(element::qsgd_code(-3.0f, 0.9999f, scale, s) == ((4u << 1) | 1u));
}

TEST_CASE("error feedback's residual is fl(corrected - sent), zero where a value was sent as is",
          "[compress][element]") {
  CHECK(element::residual_after(1.5f, 1.5f) == 0.0f);
  CHECK(element::residual_after(1.0f, 0.25f) == 0.75f);
  CHECK(element::residual_after(0.1f, 0.3f) == -(-0.1f + 0.3f));
}

TEST_CASE("Top-k's magnitude key orders values as the CPU codec's magnitudes do", "[compress][element]") {
  // The CPU codec's magnitude: |v|, a NaN as +infinity.
  auto magnitude = [](float v) { return std::isnan(v) ? std::numeric_limits<float>::infinity() : std::fabs(v); };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.0f,    -0.0f, std::numeric_limits<float>::denorm_min(), -1e-30f, 1e-30f, 0.5f,
                                     -0.5f,   1.0f,  -3.0f, 3.0000002f, 65504.0f, -1e30f, inf, -inf,
                                     std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()};
  for (float a : values)
    for (float b : values) {
      INFO(a << " " << b);
      CHECK((element::magnitude_key(a) < element::magnitude_key(b)) == (magnitude(a) < magnitude(b)));
      CHECK((element::magnitude_key(a) == element::magnitude_key(b)) == (magnitude(a) == magnitude(b)));
    }
}

TEST_CASE("splitmix64_at(seed, i) is draw i of splitmix64 from seed, uniform and unbiased for TernGrad",
          "[compress][element]") {
  // splitmix64 stepped one draw at a time (Steele, Lea & Flood 2014), written out here.
  std::uint64_t state = 0x1234567890ABCDEFull;
  const std::uint64_t seed = state;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    CHECK(element::splitmix64_at(seed, i) == (z ^ (z >> 31)));
  }
  // Uniforms from 2^20 draws in 64 bins: chi-square with 63 degrees of freedom stays far below
  // its 0.1% tail (103.4) for a uniform source; neighbouring draws are uncorrelated.
  const std::uint64_t n = 1 << 20;
  std::vector<double> bins(64, 0.0);
  double lag_product = 0, previous = element::uniform_of(element::splitmix64_at(7, 0));
  for (std::uint64_t i = 1; i <= n; ++i) {
    const double u = element::uniform_of(element::splitmix64_at(7, i));
    bins[static_cast<std::size_t>(u * 64)] += 1;
    lag_product += (u - 0.5) * (previous - 0.5);
    previous = u;
  }
  double chi_square = 0;
  for (double count : bins) chi_square += (count - n / 64.0) * (count - n / 64.0) / (n / 64.0);
  CHECK(chi_square < 103.4);
  CHECK(std::fabs(lag_product / n / (1.0 / 12)) < 0.01);  // correlation; its noise is 1/sqrt(n) = 0.001
  // TernGrad from these draws, one seed per step: the mean decoded value over 20,000 steps is g,
  // within 5 standard errors (each step's decoded value is +-scale or 0).
  const float scale = 2.0f;
  for (float g : {0.3f, -1.1f}) {
    double sum = 0;
    const int steps = 20000;
    for (int step = 0; step < steps; ++step) {
      const float u = element::uniform_of(element::splitmix64_at(0xC0FFEEull + step, 12345));
      sum += element::terngrad_value(element::terngrad_code(g, scale, u), scale);
    }
    const double p = std::fabs(g) / scale, standard_error = scale * std::sqrt(p * (1 - p) / steps);
    INFO(g);
    CHECK(std::fabs(sum / steps - g) < 5 * standard_error);
  }
}
