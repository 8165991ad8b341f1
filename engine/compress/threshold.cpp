#include "engine/compress/threshold.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/sparse_pairs.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<ThresholdOptions> ThresholdOptions::fields() {
  using O = ThresholdOptions;
  return OptionFields<O>()
      .number("tau", &O::tau, "an element is sent when its magnitude (after error correction) exceeds tau",
              finite_above(0))
      .flag("error_feedback", &O::error_feedback, "accumulate what was not sent and add it to the next gradient");
}

std::size_t threshold_payload_bytes(std::size_t count) { return sparse_pairs_bytes(count); }

ThresholdCodec::ThresholdCodec(double tau) {
  LACONIC_ENFORCE(tau > 0.0, "threshold tau must be > 0, got ", tau);
  constexpr float kMax = std::numeric_limits<float>::max();
  if (tau >= static_cast<double>(kMax)) {
    tau_below_ = kMax;
  } else {
    tau_below_ = static_cast<float>(tau);
    if (static_cast<double>(tau_below_) > tau) tau_below_ = std::nextafter(tau_below_, 0.0f);
  }
}

void ThresholdCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "threshold handles at most 2^32-1 elements, got ", n);
  // One pass into reused scratch (the count is unknown until the end), then two block copies.
  indices_.clear();
  values_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const float v = gradient[i];
    if (!(std::fabs(v) <= tau_below_)) {  // negated so that NaN is sent
      indices_.push_back(static_cast<std::uint32_t>(i));
      values_.push_back(v);
    }
  }
  const std::size_t count = indices_.size();
  payload.resize(threshold_payload_bytes(count));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(count)};
  std::memcpy(payload.data(), header, sizeof header);
  if (count == 0) return;
  std::memcpy(payload.data() + 8, indices_.data(), 4 * count);
  std::memcpy(payload.data() + 8 + 4 * count, values_.data(), 4 * count);
}

void ThresholdCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  add_sparse_pairs(payload, dense, "threshold");
}

}  // namespace laconic::compress
