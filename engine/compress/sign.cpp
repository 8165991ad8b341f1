#include "engine/compress/sign.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t sign_bits_bytes(std::size_t n) { return (n + 7) / 8; }

namespace {

// One pass over the values, eight at a time into a byte. Each of the eight bit positions keeps
// its own double accumulators: eight independent chains instead of one serial sum, so the loop
// runs at throughput, and double keeps million-element sums accurate. Everything is branch-free:
// random signs would mispredict half the time.
template <bool kSums>
void pack_byte(const float* v, unsigned count, std::uint8_t* out, double* positive, double* negative) {
  unsigned byte = 0;
  for (unsigned j = 0; j < count; ++j) {
    const bool is_negative = v[j] < 0.0f;
    byte |= static_cast<unsigned>(is_negative) << j;
    if constexpr (kSums) {
      // Split v into its negative and non-negative part with a mask (a NaN is not < 0 and
      // lands in the positive sum, where it shows); GCC turns min/max or ?: into branches here.
      const std::uint32_t bits_of_v = std::bit_cast<std::uint32_t>(v[j]);
      const std::uint32_t mask = 0u - static_cast<std::uint32_t>(is_negative);
      positive[j] += static_cast<double>(std::bit_cast<float>(bits_of_v & ~mask));
      negative[j] += static_cast<double>(std::bit_cast<float>(bits_of_v & mask));
    }
  }
  *out = static_cast<std::uint8_t>(byte);
}

template <bool kSums>
SignSums pack(std::span<const float> values, std::uint8_t* bits) {
  double positive[8] = {}, negative[8] = {};
  const std::size_t n = values.size(), full = n / 8;
  for (std::size_t b = 0; b < full; ++b) pack_byte<kSums>(values.data() + 8 * b, 8, bits + b, positive, negative);
  if (n % 8 != 0)
    pack_byte<kSums>(values.data() + 8 * full, static_cast<unsigned>(n % 8), bits + full, positive, negative);
  SignSums sums;
  if constexpr (kSums) {
    for (int j = 0; j < 8; ++j) {
      sums.positive += positive[j];
      sums.negative += negative[j];
    }
    for (std::size_t b = 0; b < sign_bits_bytes(n); ++b)
      sums.negatives += static_cast<std::size_t>(std::popcount(bits[b]));
  }
  return sums;
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

}  // namespace

void pack_sign_bits(std::span<const float> values, std::uint8_t* bits) { pack<false>(values, bits); }

SignSums pack_sign_bits_summed(std::span<const float> values, std::uint8_t* bits) { return pack<true>(values, bits); }

void add_sign_bits(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> dense) {
  // Indexing by the bit instead of a select keeps the loop free of unpredictable branches.
  const float value[2] = {if_positive, if_negative};
  const std::size_t n = dense.size(), full = n / 8;
  float* d = dense.data();
  for (std::size_t b = 0; b < full; ++b, d += 8) {
    const unsigned byte = bits[b];
    for (unsigned j = 0; j < 8; ++j) d[j] += value[(byte >> j) & 1u];
  }
  for (unsigned j = 0; j < n % 8; ++j) d[j] += value[(bits[full] >> j) & 1u];
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

void ScaledSignCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  enforce_count("ef_signsgd", n);
  payload.resize(scaled_sign_payload_bytes(n));
  // The signs do not depend on the scale, so bits and the l1 norm come from one pass and the
  // scale is written into the header afterwards.
  const SignSums sums = pack<true>(gradient, payload.data() + 8);
  const float scale = n == 0 ? 0.0f : static_cast<float>((sums.positive - sums.negative) / static_cast<double>(n));
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &scale, 4);
}

void ScaledSignCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  check_header("ef_signsgd", payload, 8, dense);
  float scale;
  std::memcpy(&scale, payload.data() + 4, 4);
  add_sign_bits(payload.data() + 8, scale, -scale, dense);
}

}  // namespace laconic::compress
