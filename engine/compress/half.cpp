#include "engine/compress/half.hpp"

#include <bit>
#include <cstring>
#include <limits>

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
  if (exponent != 0)
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
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

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::size_t half_payload_bytes(std::size_t n) { return 4 + 2 * n; }

namespace {

template <std::uint16_t (*Encode)(float)>
void encode_half(const char* name, std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), name,
                  " handles at most 2^32-1 elements, got ", n);
  payload.resize(half_payload_bytes(n));
  const auto header = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &header, 4);
  std::uint8_t* out = payload.data() + 4;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t bits = Encode(gradient[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

template <float (*Decode)(std::uint16_t)>
void decode_half_add(const char* name, const Payload& payload, std::span<float> dense) {
  LACONIC_ENFORCE(payload.size() >= 4, "expected a ", name, " payload of at least 4 bytes, got ",
                  payload.size());
  std::uint32_t header;
  std::memcpy(&header, payload.data(), 4);
  const std::size_t n = header;
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(),
                  " elements, got one for ", n);
  LACONIC_ENFORCE(payload.size() == half_payload_bytes(n), "expected ", half_payload_bytes(n),
                  " payload bytes for n=", n, ", got ", payload.size());
  const std::uint8_t* in = payload.data() + 4;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    dense[i] += Decode(bits);
  }
}

}  // namespace

void Fp16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half<float_to_fp16>("fp16", gradient, payload);
}

void Fp16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add<fp16_to_float>("fp16", payload, dense);
}

void Bf16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half<float_to_bf16>("bf16", gradient, payload);
}

void Bf16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add<bf16_to_float>("bf16", payload, dense);
}

}  // namespace laconic::compress
