#include "engine/compress/sign.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/compress/element_math.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t sign_bits_bytes(std::size_t n) { return (n + 7) / 8; }

namespace {

// Per bit position: the sums of the positive and of the negative elements.
struct LaneSums {
  double positive[8] = {}, negative[8] = {};
};

// Up to eight values into a byte. Each of the eight bit positions keeps its own accumulators:
// eight independent chains instead of one serial sum, and double keeps million-element sums
// accurate. Everything is branch-free: random signs would mispredict half the time.
template <bool kSums>
void pack_byte(const float* v, unsigned count, std::uint8_t* out, LaneSums& sums) {
  unsigned byte = 0;
  for (unsigned j = 0; j < count; ++j) {
    const bool is_negative = element::negative_bit(v[j]) != 0;
    byte |= static_cast<unsigned>(is_negative) << j;
    if constexpr (kSums) {
      // Split v into its negative and non-negative part with a mask (a NaN is not < 0 and
      // lands in the positive sum, where it shows); GCC turns min/max or ?: into branches here.
      const std::uint32_t bits_of_v = std::bit_cast<std::uint32_t>(v[j]);
      const std::uint32_t mask = 0u - static_cast<std::uint32_t>(is_negative);
      sums.positive[j] += static_cast<double>(std::bit_cast<float>(bits_of_v & ~mask));
      sums.negative[j] += static_cast<double>(std::bit_cast<float>(bits_of_v & mask));
    }
  }
  *out = static_cast<std::uint8_t>(byte);
}

// Set bits in `count` bytes: eight at a time by the SWAR popcount (std::popcount is a library
// call on the baseline x86-64 target, which has no POPCNT instruction).
std::size_t set_bits(const std::uint8_t* bytes, std::size_t count) {
  std::size_t total = 0, i = 0;
  for (; i + 8 <= count; i += 8) {
    std::uint64_t x;
    std::memcpy(&x, bytes + i, 8);
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    total += static_cast<std::size_t>((x * 0x0101010101010101ull) >> 56);
  }
  for (; i < count; ++i)
    for (unsigned b = bytes[i]; b != 0; b &= b - 1) ++total;
  return total;
}

SignSums total(const LaneSums& lanes, const std::uint8_t* bits, std::size_t n) {
  SignSums sums;
  for (int j = 0; j < 8; ++j) {
    sums.positive += lanes.positive[j];
    sums.negative += lanes.negative[j];
  }
  sums.negatives = set_bits(bits, sign_bits_bytes(n));
  return sums;
}

#if defined(__SSE2__)
// The whole bytes of pack() in SSE2 registers, eight floats at a time: the same comparisons,
// masks and per-lane double additions in the same order as pack_byte, so the same bits and sums.
template <bool kSums, class Element>
void pack_whole_bytes_sse2(Element* values, const float* add, std::size_t bytes, std::uint8_t* bits, LaneSums& lanes) {
  __m128d positive[4], negative[4];
  for (int k = 0; k < 4; ++k) {
    positive[k] = _mm_loadu_pd(lanes.positive + 2 * k);
    negative[k] = _mm_loadu_pd(lanes.negative + 2 * k);
  }
  auto accumulate = [](__m128d* sums, __m128 low, __m128 high) {
    sums[0] = _mm_add_pd(sums[0], _mm_cvtps_pd(low));
    sums[1] = _mm_add_pd(sums[1], _mm_cvtps_pd(_mm_movehl_ps(low, low)));
    sums[2] = _mm_add_pd(sums[2], _mm_cvtps_pd(high));
    sums[3] = _mm_add_pd(sums[3], _mm_cvtps_pd(_mm_movehl_ps(high, high)));
  };
  const __m128 zero = _mm_setzero_ps();
  for (std::size_t b = 0; b < bytes; ++b) {
    __m128 low = _mm_loadu_ps(values + 8 * b), high = _mm_loadu_ps(values + 8 * b + 4);
    if constexpr (!std::is_const_v<Element>) {
      low = _mm_add_ps(low, _mm_loadu_ps(add + 8 * b));
      high = _mm_add_ps(high, _mm_loadu_ps(add + 8 * b + 4));
      _mm_storeu_ps(values + 8 * b, low);
      _mm_storeu_ps(values + 8 * b + 4, high);
    }
    const __m128 negative_low = _mm_cmplt_ps(low, zero), negative_high = _mm_cmplt_ps(high, zero);
    bits[b] = static_cast<std::uint8_t>(_mm_movemask_ps(negative_low) | (_mm_movemask_ps(negative_high) << 4));
    if constexpr (kSums) {
      accumulate(positive, _mm_andnot_ps(negative_low, low), _mm_andnot_ps(negative_high, high));
      accumulate(negative, _mm_and_ps(negative_low, low), _mm_and_ps(negative_high, high));
    }
  }
  for (int k = 0; k < 4; ++k) {
    _mm_storeu_pd(lanes.positive + 2 * k, positive[k]);
    _mm_storeu_pd(lanes.negative + 2 * k, negative[k]);
  }
}
#endif

// One pass over the values, eight at a time into a byte (SSE2 where the target has it). With
// mutable values, values[i] += add[i] first, in the same pass (error feedback's corrected
// gradient).
template <bool kSums, class Element>
SignSums pack(std::span<Element> values, std::uint8_t* bits, std::span<const float> add = {}) {
  LaneSums lanes;
  const std::size_t n = values.size(), full = n / 8;
  auto pack_at = [&](std::size_t b, unsigned count) {
    if constexpr (!std::is_const_v<Element>)
      for (std::size_t i = 8 * b; i < 8 * b + count; ++i) values[i] += add[i];
    pack_byte<kSums>(values.data() + 8 * b, count, bits + b, lanes);
  };
  std::size_t b = 0;
#if defined(__SSE2__)
  pack_whole_bytes_sse2<kSums>(values.data(), add.data(), full, bits, lanes);
  b = full;
#endif
  for (; b < full; ++b) pack_at(b, 8);
  if (n % 8 != 0) pack_at(full, static_cast<unsigned>(n % 8));
  if constexpr (!kSums) return {};
  return total(lanes, bits, n);
}

void enforce_count(const char* name, std::size_t n) {
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), name, " handles at most 2^32-1 elements, got ", n);
}

// Checks the uint32 element count at the front of a payload against the dense length and the
// payload size; returns n.
std::size_t check_header(const char* name, const Payload& payload, std::size_t header_bytes, std::span<float> dense) {
  const std::size_t n = read_element_count(payload, header_bytes, dense.size(), name);
  const std::size_t expected = header_bytes + sign_bits_bytes(n);
  LACONIC_ENFORCE(payload.size() == expected, "expected ", expected, " payload bytes for n=", n, ", got ",
                  payload.size());
  return n;
}

// The signsgd / signum wire format.
void encode_signs(std::span<const float> values, Payload& payload) {
  enforce_count("signsgd", values.size());
  payload.resize(sign_payload_bytes(values.size()));
  const auto count = static_cast<std::uint32_t>(values.size());
  std::memcpy(payload.data(), &count, 4);
  pack<false>(values, payload.data() + 4);
}

void decode_signs_add(const Payload& payload, std::span<float> dense) {
  check_header("signsgd", payload, 4, dense);
  add_sign_bits(payload.data() + 4, 1.0f, -1.0f, dense);
}

#if defined(__SSE2__)
// Four lanes of all ones where the four low bits of `nibble` are set, lowest bit first.
__m128 nibble_mask(unsigned nibble) {
  return _mm_castsi128_ps(_mm_set_epi32(-static_cast<int>((nibble >> 3) & 1u), -static_cast<int>((nibble >> 2) & 1u),
                                        -static_cast<int>((nibble >> 1) & 1u), -static_cast<int>(nibble & 1u)));
}
#endif

// apply(dense[i], bit i set ? if_negative : if_positive) for every element, eight at a time;
// apply4 does the same for four lanes at once where the target has SSE2.
template <class Apply, class Apply4>
void for_each_sign(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> dense, Apply apply,
                   Apply4 apply4) {
  // Indexing by the bit instead of a select keeps the loop free of unpredictable branches.
  const float value[2] = {if_positive, if_negative};
  const std::size_t n = dense.size(), full = n / 8;
  float* d = dense.data();
  std::size_t b = 0;
#if defined(__SSE2__)
  __m128 masks[16];
  for (unsigned nibble = 0; nibble < 16; ++nibble) masks[nibble] = nibble_mask(nibble);
  const __m128 positive = _mm_set1_ps(if_positive), negative = _mm_set1_ps(if_negative);
  auto values_of = [&](unsigned nibble) {
    return _mm_or_ps(_mm_and_ps(masks[nibble], negative), _mm_andnot_ps(masks[nibble], positive));
  };
  for (; b < full; ++b, d += 8) {
    apply4(d, values_of(bits[b] & 15u));
    apply4(d + 4, values_of(bits[b] >> 4));
  }
#endif
  for (; b < full; ++b, d += 8) {
    const unsigned byte = bits[b];
    for (unsigned j = 0; j < 8; ++j) apply(d[j], value[(byte >> j) & 1u]);
  }
  for (unsigned j = 0; j < n % 8; ++j) apply(d[j], value[(bits[full] >> j) & 1u]);
}

}  // namespace

void pack_sign_bits(std::span<const float> values, std::uint8_t* bits) { pack<false>(values, bits); }

SignSums pack_sign_bits_summed(std::span<const float> values, std::uint8_t* bits) { return pack<true>(values, bits); }

SignSums pack_sign_bits_corrected(std::span<const float> gradient, std::span<float> residual, std::uint8_t* bits) {
  LACONIC_ENFORCE(gradient.size() == residual.size(), "expected a gradient of ", residual.size(), " elements, got ",
                  gradient.size());
  return pack<true>(residual, bits, gradient);
}

void add_sign_bits(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> dense) {
  for_each_sign(
      bits, if_positive, if_negative, dense, [](float& d, float value) { d += value; },
      [](float* d, auto values) {
#if defined(__SSE2__)
        _mm_storeu_ps(d, _mm_add_ps(_mm_loadu_ps(d), values));
#else
        (void)d, (void)values;  // never called without SSE2
#endif
      });
}

void subtract_sign_bits(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> residual) {
  for_each_sign(
      bits, if_positive, if_negative, residual, [](float& r, float value) { r = minus_decoded(r, value); },
      [](float* r, auto values) {
#if defined(__SSE2__)
        const __m128 sign = _mm_set1_ps(-0.0f);
        _mm_storeu_ps(r, _mm_xor_ps(_mm_add_ps(_mm_xor_ps(_mm_loadu_ps(r), sign), values), sign));
#else
        (void)r, (void)values;  // never called without SSE2
#endif
      });
}

void majority_vote(std::span<float> sum) {
  for (float& v : sum) v = static_cast<float>((v > 0.0f) - (v < 0.0f));
}

std::size_t sign_payload_bytes(std::size_t n) { return 4 + sign_bits_bytes(n); }

std::size_t scaled_sign_payload_bytes(std::size_t n) { return 8 + sign_bits_bytes(n); }

// signsgd

void SignSgdCompressor::compress(std::span<const float> gradient, Payload& payload) { encode_signs(gradient, payload); }

void SignSgdCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_signs_add(payload, dense);
}

void SignSgdCompressor::aggregate(std::span<float> sum, int) const { majority_vote(sum); }

// signum

OptionFields<SignumOptions> SignumOptions::fields() {
  return OptionFields<SignumOptions>().number("momentum", &SignumOptions::momentum,
                                              "weight of the old momentum in m = momentum*m + (1-momentum)*g",
                                              closed_open(0, 1));
}

SignumCompressor::SignumCompressor(SignumOptions options)
    : beta_(static_cast<float>(options.momentum)), one_minus_beta_(static_cast<float>(1.0 - options.momentum)) {}

void SignumCompressor::compress(std::span<const float> gradient, Payload& payload) {
  if (momentum_.empty()) momentum_.assign(gradient.size(), 0.0f);
  LACONIC_ENFORCE(momentum_.size() == gradient.size(), "expected a gradient of ", momentum_.size(), " elements, got ",
                  gradient.size());
  for (std::size_t i = 0; i < gradient.size(); ++i) momentum_[i] = beta_ * momentum_[i] + one_minus_beta_ * gradient[i];
  encode_signs(momentum_, payload);
}

void SignumCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_signs_add(payload, dense);
}

void SignumCompressor::aggregate(std::span<float> sum, int) const { majority_vote(sum); }

// ef_signsgd

OptionFields<EfSignSgdOptions> EfSignSgdOptions::fields() {
  return OptionFields<EfSignSgdOptions>().flag(
      "error_feedback", &EfSignSgdOptions::error_feedback,
      "accumulate what the scaled sign missed and add it to the next gradient");
}

namespace {

// Sizes an ef_signsgd payload for `n` elements; returns where its sign bits go.
std::uint8_t* scaled_sign_bits_of(Payload& payload, std::size_t n) {
  enforce_count("ef_signsgd", n);
  payload.resize(scaled_sign_payload_bytes(n));
  return payload.data() + 8;
}

// The signs do not depend on the scale, so bits and the l1 norm come from one pass and the
// scale is written into the header afterwards.
void write_scaled_sign_header(Payload& payload, std::size_t n, const SignSums& sums) {
  const float scale = n == 0 ? 0.0f : static_cast<float>((sums.positive - sums.negative) / static_cast<double>(n));
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &scale, 4);
}

}  // namespace

void ScaledSignCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  write_scaled_sign_header(payload, n, pack<true>(gradient, scaled_sign_bits_of(payload, n)));
}

void ScaledSignCodec::compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload) {
  const std::size_t n = gradient.size();
  write_scaled_sign_header(payload, n, pack_sign_bits_corrected(gradient, residual, scaled_sign_bits_of(payload, n)));
}

void ScaledSignCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  check_header("ef_signsgd", payload, 8, dense);
  const float scale = header_float(payload, 4);
  add_sign_bits(payload.data() + 8, scale, -scale, dense);
}

void ScaledSignCodec::subtract_decoded(const Payload& payload, std::span<float> residual) const {
  check_header("ef_signsgd", payload, 8, residual);
  const float scale = header_float(payload, 4);
  subtract_sign_bits(payload.data() + 8, scale, -scale, residual);
}

}  // namespace laconic::compress
