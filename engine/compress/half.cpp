#include "engine/compress/half.hpp"

#include <bit>
#include <cstring>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::uint16_t float_to_fp16(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
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

float fp16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x03FFu;
  if (exponent == 0x1F)  // infinity or NaN: same payload, widened
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: mantissa * 2^-24; normalise so that the leading one becomes the implicit bit.
  const int lead = std::bit_width(mantissa) - 1;  // 0..9
  mantissa = (mantissa << (10 - lead)) & 0x03FFu;
  const auto biased = static_cast<std::uint32_t>(127 - 24 + lead);
  return std::bit_cast<float>(sign | (biased << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: truncation could clear every payload bit
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  // Round to nearest even on the low half; a carry rolls into the exponent (up to infinity).
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

bool fp16_hardware_available() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

namespace {

void fp16_encode_portable(std::span<const float> in, std::uint8_t* out) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint16_t bits = float_to_fp16(in[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

void fp16_decode_add_portable(const std::uint8_t* in, std::span<float> dense) {
  for (std::size_t i = 0; i < dense.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    dense[i] += fp16_to_float(bits);
  }
}

#if defined(__x86_64__) || defined(__i386__)
// vcvtps2ph with an explicit round-to-nearest-even ignores MXCSR; like float_to_fp16 it sends
// 65520 and above to infinity, rounds subnormals, and keeps a NaN's sign and top payload bits
// with the quiet bit set. vcvtph2ps is exact. The tests compare both paths bit for bit.
[[gnu::target("avx2,f16c")]] void fp16_encode_f16c(std::span<const float> in, std::uint8_t* out) {
  const std::size_t whole = in.size() - in.size() % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in.data() + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), half);
  }
  fp16_encode_portable(in.subspan(whole), out + 2 * whole);
}

[[gnu::target("avx2,f16c")]] void fp16_decode_add_f16c(const std::uint8_t* in, std::span<float> dense) {
  const std::size_t whole = dense.size() - dense.size() % 8;
  float* d = dense.data();
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m256 value = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i)));
    _mm256_storeu_ps(d + i, _mm256_add_ps(_mm256_loadu_ps(d + i), value));
  }
  fp16_decode_add_portable(in + 2 * whole, dense.subspan(whole));
}
#endif

}  // namespace

void fp16_encode(std::span<const float> in, std::uint8_t* out, bool hardware) {
#if defined(__x86_64__) || defined(__i386__)
  if (hardware) {
    LACONIC_ENFORCE(fp16_hardware_available(), "the F16C fp16 path needs AVX2 and F16C");
    return fp16_encode_f16c(in, out);
  }
#else
  LACONIC_ENFORCE(!hardware, "the F16C fp16 path needs an x86 CPU");
#endif
  fp16_encode_portable(in, out);
}

void fp16_decode_add(const std::uint8_t* in, std::span<float> dense, bool hardware) {
#if defined(__x86_64__) || defined(__i386__)
  if (hardware) {
    LACONIC_ENFORCE(fp16_hardware_available(), "the F16C fp16 path needs AVX2 and F16C");
    return fp16_decode_add_f16c(in, dense);
  }
#else
  LACONIC_ENFORCE(!hardware, "the F16C fp16 path needs an x86 CPU");
#endif
  fp16_decode_add_portable(in, dense);
}

std::size_t half_payload_bytes(std::size_t n) { return 4 + 2 * n; }

namespace {

// The header and its checks around a bulk conversion `code`.
template <class Encode>
void encode_half(const char* name, std::span<const float> gradient, Payload& payload, Encode code) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), name, " handles at most 2^32-1 elements, got ", n);
  payload.resize(half_payload_bytes(n));
  const auto header = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &header, 4);
  code(gradient, payload.data() + 4);
}

template <class DecodeAdd>
void decode_half_add(const char* name, const Payload& payload, std::span<float> dense, DecodeAdd decode_add) {
  const std::size_t n = read_element_count(payload, 4, dense.size(), name);
  LACONIC_ENFORCE(payload.size() == half_payload_bytes(n), "expected ", half_payload_bytes(n),
                  " payload bytes for n=", n, ", got ", payload.size());
  decode_add(payload.data() + 4, dense);
}

}  // namespace

void Fp16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half("fp16", gradient, payload,
              [&](std::span<const float> in, std::uint8_t* out) { fp16_encode(in, out, hardware_); });
}

void Fp16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add("fp16", payload, dense,
                  [&](const std::uint8_t* in, std::span<float> out) { fp16_decode_add(in, out, hardware_); });
}

void Bf16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half("bf16", gradient, payload, [](std::span<const float> in, std::uint8_t* out) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::uint16_t bits = float_to_bf16(in[i]);
      std::memcpy(out + 2 * i, &bits, 2);
    }
  });
}

void Bf16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add("bf16", payload, dense, [](const std::uint8_t* in, std::span<float> out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, in + 2 * i, 2);
      out[i] += bf16_to_float(bits);
    }
  });
}

}  // namespace laconic::compress
