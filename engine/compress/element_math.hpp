#pragma once
// The codecs' per-element math, written once for the CPU codecs and the CUDA kernels
// (engine/compress/cuda/, LACONIC_WITH_CUDA): every function here is host code for the CPU build
// and host + device code under nvcc, so that the CPU tests (tests/compress/element_math_test.cpp)
// check on every CI run what a kernel computes per element, and only the kernels' launch and
// scheduling wait for a GPU. No std:: calls that device code lacks: bits through memcpy, fabsf.
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define LACONIC_HOST_DEVICE __host__ __device__
#else
#define LACONIC_HOST_DEVICE
#endif

namespace laconic::compress::element {

LACONIC_HOST_DEVICE inline std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

LACONIC_HOST_DEVICE inline float float_of(std::uint32_t bits) {
  float value;
  memcpy(&value, &bits, 4);
  return value;
}

/// 1 for a value whose sign bit is set (-0.0 and negative NaNs included), else 0.
LACONIC_HOST_DEVICE inline std::uint32_t sign_bit(float value) { return bits_of(value) >> 31; }

// ---- fp16 and bf16 (compressors fp16, bf16): round to nearest even, NaN kept quiet ----------

/// IEEE binary16 of `value`, rounded to nearest even; NaN stays NaN (quiet bit set, the top
/// payload bits kept), overflow goes to infinity, subnormals are rounded, not flushed.
LACONIC_HOST_DEVICE inline std::uint16_t fp16_bits(float value) {
  const std::uint32_t x = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u)  // NaN: set the quiet bit, keep the top payload bits
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x03FFu));
  // 65520 = 0x477FF000 lies halfway between 65504 (the largest fp16, odd significand) and 2^16,
  // so round-to-nearest-even sends it and everything above (infinity included) to infinity.
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal fp16
    // Rebias the exponent (127 -> 15), then round away the low 13 bits to nearest even. A carry
    // out of the significand correctly bumps the exponent.
    std::uint32_t m = magnitude - 0x38000000u;
    m += 0x0FFFu + ((m >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (m >> 13));
  }
  // Subnormal fp16 (or zero): the result counts units of 2^-24. With the implicit bit restored,
  // the float is significand * 2^(e - 150), i.e. significand >> (126 - e) units.
  const std::uint32_t e = magnitude >> 23;
  if (e < 102) return sign;  // below 2^-25: rounds to zero (2^-25 itself ties to even zero)
  const std::uint32_t significand = (magnitude & 0x007FFFFFu) | 0x00800000u;
  const std::uint32_t shift = 126 - e;  // 14..24
  std::uint32_t units = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  // Rounding up may reach 0x0400, which is exactly the smallest normal's bit pattern.
  if (rest > half || (rest == half && (units & 1u))) ++units;
  return static_cast<std::uint16_t>(sign | units);
}

/// The float an IEEE binary16 holds (exact: every fp16 is a float).
LACONIC_HOST_DEVICE inline float fp16_value(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x03FFu;
  if (exponent == 0x1F)  // infinity or NaN: same payload, widened
    return float_of(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return float_of(sign);
  // Subnormal: mantissa * 2^-24; normalise so that the leading one becomes the implicit bit.
  int lead = 0;  // position of the leading one, 0..9
  while ((mantissa >> (lead + 1)) != 0) ++lead;
  mantissa = (mantissa << (10 - lead)) & 0x03FFu;
  const auto biased = static_cast<std::uint32_t>(127 - 24 + lead);
  return float_of(sign | (biased << 23) | (mantissa << 13));
}

/// bfloat16 of `value`: the high half, rounded to nearest even; NaN kept quiet.
LACONIC_HOST_DEVICE inline std::uint16_t bf16_bits(float value) {
  const std::uint32_t x = bits_of(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: truncation could clear every payload bit
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  // Round to nearest even on the low half; a carry rolls into the exponent (up to infinity).
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

LACONIC_HOST_DEVICE inline float bf16_value(std::uint16_t bits) {
  return float_of(static_cast<std::uint32_t>(bits) << 16);
}

// ---- sign bits (signsgd, signum, ef_signsgd, onebit): element i at byte i / 8, bit i % 8 ----

/// 1 when the element is sent as negative: v < 0 (so -0.0 and NaN count as positive).
LACONIC_HOST_DEVICE inline std::uint32_t negative_bit(float value) { return value < 0.0f ? 1u : 0u; }

/// The byte of a packed bit stream that holds element i's bit, and the bit within it (LSB first).
LACONIC_HOST_DEVICE inline std::size_t bit_byte(std::size_t i) { return i / 8; }
LACONIC_HOST_DEVICE inline unsigned bit_in_byte(std::size_t i) { return static_cast<unsigned>(i % 8); }

// ---- stochastic rounding from a uniform draw (TernGrad, QSGD) --------------------------------

/// A uniform in [0, 1) from a 64-bit generator output: its top 24 bits x 2^-24 (Rng::uniform()).
LACONIC_HOST_DEVICE inline float uniform_of(std::uint64_t draw) {
  return static_cast<float>(static_cast<std::int32_t>(draw >> 40)) * (1.0f / 16777216.0f);
}

/// TernGrad's 2-bit code of `g` for max |g| = scale and the uniform u: with probability
/// |g| / scale (u below it) 1 for a positive and 2 for a negative value, else 0. A division, not a
/// multiplication by 1/scale: the largest element is kept with probability 1 exactly.
LACONIC_HOST_DEVICE inline std::uint32_t terngrad_code(float g, float scale, float u) {
  const std::uint32_t keep = u < fabsf(g) / scale ? 1u : 0u;
  return keep * (1u + sign_bit(g));
}

/// The value a TernGrad code decodes to: 0, scale, -scale (scale x 0 for 0, so that an infinite
/// or NaN scale reaches every element). Code 3 is invalid (the decoder refuses it first).
LACONIC_HOST_DEVICE inline float terngrad_value(std::uint32_t code, float scale) {
  return code == 1 ? scale : code == 2 ? -scale : scale * 0.0f;
}

/// True for a finite value (portable to device code; laconic never builds with -ffast-math).
LACONIC_HOST_DEVICE inline bool finite(float x) { return x - x == 0.0f; }

/// A QSGD bucket's scale s / norm, or 0 for a degenerate bucket, whose elements all get code 0:
/// a zero, infinite or NaN norm (the norm carries inf or NaN on to the receiver), or one so small
/// that s / norm overflows.
LACONIC_HOST_DEVICE inline float qsgd_scale(float norm, float s) {
  if (!(norm > 0.0f) || !finite(norm)) return 0.0f;
  const float scale = s / norm;
  return finite(scale) ? scale : 0.0f;
}

/// QSGD's code (level << 1 | sign) of x for scale = s / norm and the uniform u: r = min(|x| x
/// scale, s), level = floor(r) + (u < r - floor(r)), so E[level] = r; the sign only for a nonzero
/// level. Clamping r (not the level) keeps r = s exact for the largest element.
LACONIC_HOST_DEVICE inline std::uint32_t qsgd_code(float x, float u, float scale, float s) {
  const float m = fabsf(x) * scale;
  const float r = s < m ? s : m;                    // std::min(m, s)
  const auto floor = static_cast<std::int32_t>(r);  // r >= 0: truncation is floor
  const auto level = static_cast<std::uint32_t>(floor) + (u < r - static_cast<float>(floor) ? 1u : 0u);
  const std::uint32_t negative = sign_bit(x) & (level != 0 ? 1u : 0u);
  return (level << 1) | negative;
}

/// The value a QSGD code decodes to: +-level x unit (unit = norm / s); the sign is an XOR.
LACONIC_HOST_DEVICE inline float qsgd_value(std::uint32_t code, float unit) {
  const float value = static_cast<float>(static_cast<std::int32_t>(code >> 1)) * unit;
  return float_of(bits_of(value) ^ (code << 31));
}

// ---- Top-k's order (topk): the magnitude as an unsigned key -------------------------------

/// The Top-k magnitude of `value` as a key whose unsigned order is the CPU codec's float order
/// of magnitudes: |value|'s bits, a NaN as +infinity's (the CPU codec counts NaN as the largest
/// magnitude, tied with infinities). Radix selection on the device works on these keys.
LACONIC_HOST_DEVICE inline std::uint32_t magnitude_key(float value) {
  const std::uint32_t magnitude = bits_of(value) & 0x7FFFFFFFu;
  return magnitude > 0x7F800000u ? 0x7F800000u : magnitude;
}

// ---- a random stream any element can reach (the CUDA kernels' stochastic rounding) -----------

/// Draw `i` of the splitmix64 sequence (Steele, Lea & Flood 2014) that starts at `seed`: the
/// state after i + 1 steps of + 0x9E3779B97F4A7C15, mixed. Every element reads its own draw
/// without the draws before it, so a kernel's threads need no shared generator state. The CPU
/// codecs keep xoshiro256** (their payloads are unchanged); a device codec's draws are these.
LACONIC_HOST_DEVICE inline std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---- error feedback --------------------------------------------------------------------------

/// The residual after sending: fl(corrected - sent), exactly 0 where a value was sent as is.
/// ErrorFeedback::subtract_decoded gets the same bits by negating around decompress_add.
LACONIC_HOST_DEVICE inline float residual_after(float corrected, float sent) { return -(-corrected + sent); }

}  // namespace laconic::compress::element
