#include "engine/compress/onebit.hpp"

#include <cstring>
#include <limits>

#include "engine/compress/payload_header.hpp"
#include "engine/compress/sign.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<OnebitOptions> OnebitOptions::fields() {
  return OptionFields<OnebitOptions>().flag("error_feedback", &OnebitOptions::error_feedback,
                                            "accumulate the quantization error and add it to the next gradient");
}

std::size_t onebit_payload_bytes(std::size_t n) { return 12 + sign_bits_bytes(n); }

void OnebitCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "onebit handles at most 2^32-1 elements, got ", n);
  payload.resize(onebit_payload_bytes(n));
  // The bits do not depend on the means: one pass packs them and sums each side, the means go
  // into the header afterwards.
  const SignSums sums = pack_sign_bits_summed(gradient, payload.data() + 12);
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

void OnebitCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 12, dense.size(), "onebit");
  LACONIC_ENFORCE(payload.size() == onebit_payload_bytes(n), "expected ", onebit_payload_bytes(n),
                  " payload bytes for n=", n, ", got ", payload.size());
  float mean_positive, mean_negative;
  std::memcpy(&mean_positive, payload.data() + 4, 4);
  std::memcpy(&mean_negative, payload.data() + 8, 4);
  add_sign_bits(payload.data() + 12, mean_positive, mean_negative, dense);
}

}  // namespace laconic::compress
