#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "engine/compress/half.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

std::uint32_t bits_of(float v) { return std::bit_cast<std::uint32_t>(v); }

bool is_fp16_nan(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }

// fp16 decoding by the definition: (-1)^s * 2^(e-15) * (1 + m/1024), or m * 2^-24 when e = 0.
double reference_fp16_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == 0x1F) return m == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * std::ldexp(static_cast<double>(m), -24);
  return sign * std::ldexp(static_cast<double>(1024 + m), e - 25);
}

// fp16 rounding in double arithmetic: the spacing of fp16 numbers around |f| is 2^(exponent-10)
// (exponent clamped at -14 for subnormals); |f| / spacing is exact in double and nearbyint()
// rounds it to nearest even. 65520 and above overflow (it is the midpoint past 65504).
float reference_fp16_round(float f) {
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return std::copysign(INFINITY, f);
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const double spacing = std::ldexp(1.0, std::max(e - 1, -14) - 10);
  return static_cast<float>(std::copysign(std::nearbyint(a / spacing) * spacing, f));
}

// bf16 rounding in double arithmetic: pick the nearer of the two bf16 neighbours (truncation and
// truncation + one bf16 spacing, where 2^128 stands for overflow), ties to the even one.
float reference_bf16_round(float f) {
  if (std::isinf(f)) return f;
  const std::uint32_t truncated = bits_of(f) & 0xFFFF0000u;
  const double a = std::fabs(static_cast<double>(f));
  const double below = std::fabs(static_cast<double>(std::bit_cast<float>(truncated)));
  const int exponent_field = static_cast<int>((bits_of(f) >> 23) & 0xFF);
  const double above = below + std::ldexp(1.0, std::max(exponent_field, 1) - 127 - 7);
  const double to_below = a - below, to_above = above - a;
  const bool below_is_even = ((truncated >> 16) & 1u) == 0;
  const bool pick_below = to_below < to_above || (to_below == to_above && below_is_even);
  const double chosen = pick_below ? below : above;
  if (chosen >= std::ldexp(1.0, 128)) return std::copysign(INFINITY, f);
  return static_cast<float>(std::copysign(chosen, f));
}

// Floats concentrated around the fp16 range (exponents 2^-30 .. 2^20) plus fully random bits.
std::vector<float> probe_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> out;
  out.reserve(n);
  while (out.size() < n) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng());
    if (out.size() % 2 == 0) bits = (bits & 0x807FFFFFu) | ((97u + static_cast<std::uint32_t>(rng() % 51)) << 23);
    const float f = std::bit_cast<float>(bits);
    if (!std::isnan(f)) out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("fp16 encodes known values to their IEEE binary16 bits", "[compress][half]") {
  struct Case {
    float value;
    std::uint16_t bits;
  };
  const Case cases[] = {
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.1f, 0x2E66},
      {1.0f / 3.0f, 0x3555},
      {65504.0f, 0x7BFF},                        // largest finite fp16
      {std::nextafter(65520.0f, 0.0f), 0x7BFF},  // just below the midpoint
      {65520.0f, 0x7C00},                        // midpoint, ties to even: inf
      {1e10f, 0x7C00},
      {INFINITY, 0x7C00},
      {-INFINITY, 0xFC00},
      {5.96e-8f, 0x0001},                                       // ~2^-24, smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},                          // midpoint 0..2^-24: to even 0
      {std::nextafter(std::ldexp(1.0f, -25), 1.0f), 0x0001},    // just above it
      {3.0f * std::ldexp(1.0f, -25), 0x0002},                   // 1.5 units: to even 2
      {std::ldexp(1.0f, -14), 0x0400},                          // smallest normal
      {std::ldexp(1.0f, -14) - std::ldexp(1.0f, -24), 0x03FF},  // largest subnormal
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},                   // tie: stays on even 0x3C00
      {1.0f + 3.0f * std::ldexp(1.0f, -11), 0x3C02},            // tie: up to even 0x3C02
      {1e-10f, 0x0000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
  };
  for (const Case& c : cases) {
    INFO("value " << c.value);
    CHECK(float_to_fp16(c.value) == c.bits);
  }
  CHECK(fp16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(fp16_to_float(0x7BFF) == 65504.0f);
  CHECK(fp16_to_float(0xFC00) == -INFINITY);
  CHECK(std::signbit(fp16_to_float(0x8000)));
}

TEST_CASE("fp16 keeps NaN a NaN, with its sign, even when only low payload bits are set", "[compress][half]") {
  CHECK(is_fp16_nan(float_to_fp16(std::numeric_limits<float>::quiet_NaN())));
  const std::uint16_t low_payload = float_to_fp16(std::bit_cast<float>(0x7F800001u));
  CHECK(is_fp16_nan(low_payload));
  CHECK(is_fp16_nan(float_to_fp16(std::bit_cast<float>(0xFFC00000u))));
  CHECK((float_to_fp16(std::bit_cast<float>(0xFFC00000u)) & 0x8000u) != 0);
  CHECK(std::isnan(fp16_to_float(0x7E00)));
  CHECK(std::isnan(fp16_to_float(0x7C01)));
}

TEST_CASE("every non-NaN fp16 bit pattern decodes exactly and encodes back to itself", "[compress][half]") {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (is_fp16_nan(bits)) continue;
    const float value = fp16_to_float(bits);
    REQUIRE(static_cast<double>(value) == reference_fp16_value(bits));
    REQUIRE(std::signbit(value) == ((bits & 0x8000u) != 0));
    REQUIRE(float_to_fp16(value) == bits);
  }
}

TEST_CASE("fp16 rounds to nearest even like a double-arithmetic reference", "[compress][half]") {
  for (float f : probe_floats(400000, 11)) {
    const float got = fp16_to_float(float_to_fp16(f));
    const float want = reference_fp16_round(f);
    INFO("input bits 0x" << std::hex << bits_of(f));
    REQUIRE(bits_of(got) == bits_of(want));
  }
}

TEST_CASE("fp16 relative error is at most 2^-11 in the normal range", "[compress][half]") {
  // Unit roundoff of an 11-bit significand: |fl(x) - x| <= 2^-11 |x| for 2^-14 <= |x| <= 65504.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> log_magnitude(-14.0, std::log2(65504.0));
  for (int i = 0; i < 200000; ++i) {
    auto x = static_cast<float>(std::exp2(log_magnitude(rng)));
    if (i % 2) x = -x;
    const float y = fp16_to_float(float_to_fp16(x));
    REQUIRE(std::fabs(static_cast<double>(y) - x) <= std::ldexp(std::fabs(x), -11));
  }
}

TEST_CASE("bf16 rounds to nearest even like a double-arithmetic reference", "[compress][half]") {
  for (float f : probe_floats(400000, 12)) {
    const float got = bf16_to_float(float_to_bf16(f));
    const float want = reference_bf16_round(f);
    INFO("input bits 0x" << std::hex << bits_of(f));
    REQUIRE(bits_of(got) == bits_of(want));
  }
  // The edges: the largest float rounds to infinity, the midpoint below it ties to even.
  CHECK(bf16_to_float(float_to_bf16(std::numeric_limits<float>::max())) == INFINITY);
  CHECK(float_to_bf16(std::bit_cast<float>(0x3F808000u)) == 0x3F80);  // tie, 0x3F80 even
  CHECK(float_to_bf16(std::bit_cast<float>(0x3F818000u)) == 0x3F82);  // tie, up to even
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(-0.0f) == 0x8000);
}

TEST_CASE("bf16 keeps NaN a quiet NaN and every non-NaN pattern round-trips", "[compress][half]") {
  const std::uint16_t low_payload = float_to_bf16(std::bit_cast<float>(0x7F800001u));
  CHECK(std::isnan(bf16_to_float(low_payload)));
  CHECK((low_payload & 0x0040u) != 0);
  CHECK(std::signbit(bf16_to_float(float_to_bf16(std::bit_cast<float>(0xFFC00000u)))));
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float value = bf16_to_float(bits);
    if (std::isnan(value)) continue;
    REQUIRE(bits_of(value) == h << 16);
    REQUIRE(float_to_bf16(value) == bits);
  }
}

TEST_CASE("bf16 relative error is at most 2^-8", "[compress][half]") {
  // Unit roundoff of an 8-bit significand, over normal floats from 1e-30 to 1e30.
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> log_magnitude(-99.0, 99.0);
  for (int i = 0; i < 200000; ++i) {
    auto x = static_cast<float>(std::exp2(log_magnitude(rng)));
    if (i % 2) x = -x;
    const float y = bf16_to_float(float_to_bf16(x));
    REQUIRE(std::fabs(static_cast<double>(y) - x) <= std::ldexp(std::fabs(x), -8));
  }
}

TEST_CASE(
    "fp16 and bf16 payloads are 4 header bytes plus 2 bytes per element and decode "
    "to the rounded gradient",
    "[compress][half]") {
  Fp16Compressor fp16;
  Bf16Compressor bf16;
  CHECK(fp16.name() == "fp16");
  CHECK(bf16.name() == "bf16");
  CHECK_FALSE(fp16.summable());
  CHECK_FALSE(bf16.summable());
  for (std::size_t n : {0u, 1u, 7u, 1000u, 12345u}) {
    const auto g = random_gradient(n, static_cast<unsigned>(n) + 1);
    Payload p16, pb16;
    fp16.compress(g, p16);
    bf16.compress(g, pb16);
    CHECK(p16.size() == 4 + 2 * n);
    CHECK(pb16.size() == 4 + 2 * n);
    CHECK(p16.size() == half_payload_bytes(n));
    // decompress_add adds onto what is there.
    std::vector<float> d16(n, 1.0f), db16(n, 1.0f);
    fp16.decompress_add(p16, d16);
    bf16.decompress_add(pb16, db16);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(d16[i] == 1.0f + reference_fp16_round(g[i]));
      REQUIRE(db16[i] == 1.0f + reference_bf16_round(g[i]));
      std::uint16_t wire;
      std::memcpy(&wire, p16.data() + 4 + 2 * i, 2);
      REQUIRE(wire == float_to_fp16(g[i]));
    }
  }
}

TEST_CASE("a half payload for another length or of the wrong size is refused", "[compress][half]") {
  Fp16Compressor fp16;
  Payload payload;
  fp16.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(fp16.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  std::vector<float> right(100, 0.0f);
  payload.pop_back();
  REQUIRE_THROWS_WITH(fp16.decompress_add(payload, right),
                      Catch::Contains("expected 204 payload bytes for n=100, got 203"));
  Payload tiny(3);
  REQUIRE_THROWS_AS(Bf16Compressor().decompress_add(tiny, right), InvariantError);
}

TEST_CASE("fp16's F16C path gives the portable path's bits on every kind of float", "[compress][half][needs-f16c]") {
  if (!fp16_hardware_available()) LACONIC_SKIP("this CPU has no AVX2+F16C: only the portable path runs");
  // Random floats around the fp16 range, every float whose low 13 bits make a tie or a
  // neighbour of one, the overflow edge, subnormals of both formats, infinities and NaNs
  // (quiet and signalling, with high and low payloads), and an odd count for the tail.
  std::vector<float> in = probe_floats(200001, 21);
  for (std::uint32_t high = 0; high < 0x10000; high += 7)
    for (std::uint32_t low : {0x0FFFu, 0x1000u, 0x1001u, 0x0000u, 0x1FFFu})
      in.push_back(std::bit_cast<float>((high << 16) | (low & 0xFFFFu)));
  for (std::uint32_t bits : {0x477FF000u, 0x477FEFFFu, 0x477FF001u, 0x33000000u, 0x33000001u, 0x387FE000u, 0x387FF000u,
                             0x00000001u, 0x807FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u,
                             0x7FA00000u, 0xFFFFFFFFu, 0x80000000u})
    in.push_back(std::bit_cast<float>(bits));
  std::vector<std::uint8_t> portable(2 * in.size()), hardware(2 * in.size());
  fp16_encode(in, portable.data(), false);
  fp16_encode(in, hardware.data(), true);
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO("input bits 0x" << std::hex << bits_of(in[i]));
    REQUIRE(std::memcmp(&portable[2 * i], &hardware[2 * i], 2) == 0);
  }
  // Decoding every binary16 pattern (NaNs included) onto the same values gives the same sums.
  std::vector<std::uint8_t> every(2 * 0x10001);
  for (std::uint32_t h = 0; h <= 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h & 0xFFFF);
    std::memcpy(&every[2 * h], &bits, 2);
  }
  std::vector<float> base = probe_floats(0x10001, 22), a = base, b = base;
  fp16_decode_add(every.data(), a, false);
  fp16_decode_add(every.data(), b, true);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("fp16 bits 0x" << std::hex << (i & 0xFFFF));
    REQUIRE(bits_of(a[i]) == bits_of(b[i]));
  }
}
