#include "engine/compress/onebit.hpp"

#include <cstring>
#include <limits>
#include <utility>

#include "engine/compress/payload_header.hpp"
#include "engine/compress/sign.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<OnebitOptions> OnebitOptions::fields() {
  return OptionFields<OnebitOptions>().flag("error_feedback", &OnebitOptions::error_feedback,
                                            "accumulate the quantization error and add it to the next gradient");
}

std::size_t onebit_payload_bytes(std::size_t n) { return 12 + sign_bits_bytes(n); }

namespace {

// Sizes the payload for `n` elements; returns where its sign bits go.
std::uint8_t* sign_bits_of(Payload& payload, std::size_t n) {
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "onebit handles at most 2^32-1 elements, got ", n);
  payload.resize(onebit_payload_bytes(n));
  return payload.data() + 12;
}

// The bits do not depend on the means: one pass packs them and sums each side, the means go
// into the header afterwards.
void write_header(Payload& payload, std::size_t n, const SignSums& sums) {
  const std::size_t positives = n - sums.negatives;
  const float mean_positive =
      positives == 0 ? 0.0f : static_cast<float>(sums.positive / static_cast<double>(positives));
  const float mean_negative =
      sums.negatives == 0 ? 0.0f : static_cast<float>(sums.negative / static_cast<double>(sums.negatives));
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &mean_positive, 4);
  std::memcpy(payload.data() + 8, &mean_negative, 4);
}

// Checks a payload against a dense vector of `dense_size` elements; returns its mean_positive
// and mean_negative.
std::pair<float, float> checked_means(const Payload& payload, std::size_t dense_size) {
  const std::size_t n = read_element_count(payload, 12, dense_size, "onebit");
  LACONIC_ENFORCE(payload.size() == onebit_payload_bytes(n), "expected ", onebit_payload_bytes(n),
                  " payload bytes for n=", n, ", got ", payload.size());
  return {header_float(payload, 4), header_float(payload, 8)};
}

}  // namespace

void OnebitCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  write_header(payload, n, pack_sign_bits_summed(gradient, sign_bits_of(payload, n)));
}

void OnebitCodec::compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload) {
  const std::size_t n = gradient.size();
  write_header(payload, n, pack_sign_bits_corrected(gradient, residual, sign_bits_of(payload, n)));
}

void OnebitCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const auto [mean_positive, mean_negative] = checked_means(payload, dense.size());
  add_sign_bits(payload.data() + 12, mean_positive, mean_negative, dense);
}

void OnebitCodec::subtract_decoded(const Payload& payload, std::span<float> residual) const {
  const auto [mean_positive, mean_negative] = checked_means(payload, residual.size());
  subtract_sign_bits(payload.data() + 12, mean_positive, mean_negative, residual);
}

}  // namespace laconic::compress
