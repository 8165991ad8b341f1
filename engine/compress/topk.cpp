#include "engine/compress/topk.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/core/error.hpp"

namespace laconic::compress {

std::vector<FieldSpec> TopkOptions::fields() {
  return {
      {"ratio", FieldType::Number, 0.01, "fraction of elements sent per step, in (0, 1]"},
      {"error_feedback", FieldType::Bool, true,
       "accumulate what was not sent and add it to the next gradient"},
  };
}

TopkOptions TopkOptions::from(const ComponentSpec& spec) {
  TopkOptions o;
  o.ratio = spec.number("ratio");
  o.error_feedback = spec.flag("error_feedback");
  if (!(o.ratio > 0.0 && o.ratio <= 1.0))
    throw ConfigError(str_cat("topk.ratio must be in (0, 1], got ", o.ratio));
  return o;
}

std::size_t topk_count(double ratio, std::size_t n) {
  if (n == 0) return 0;
  auto k = static_cast<std::size_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<std::size_t>(k, 1, n);
}

std::size_t topk_payload_bytes(std::size_t k) { return 8 + k * (4 + 4); }

namespace {

// NaN counts as the largest magnitude: it keeps nth_element's ordering valid and sends the NaN
// on, where divergence shows up instead of hiding in the residual.
inline float magnitude(float v) { return std::isnan(v) ? INFINITY : std::fabs(v); }

}  // namespace

void TopkCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "topk handles at most 2^32-1 ",
                  "elements, got ", n);
  const std::size_t k = topk_count(ratio_, n);
  payload.resize(topk_payload_bytes(k));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
  std::memcpy(payload.data(), header, sizeof header);
  std::uint8_t* indices = payload.data() + 8;
  std::uint8_t* values = indices + 4 * k;
  if (k == 0) return;

  // Select the k-th largest magnitude on a contiguous copy (O(n), cache-friendly), then keep
  // everything above it and as many ties as needed in one ascending pass: indices come out
  // sorted without a sort.
  magnitudes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) magnitudes_[i] = magnitude(gradient[i]);
  const auto cut = magnitudes_.begin() + static_cast<std::ptrdiff_t>(n - k);
  std::nth_element(magnitudes_.begin(), cut, magnitudes_.end());
  const float threshold = *cut;
  const auto above = static_cast<std::size_t>(
      std::count_if(cut + 1, magnitudes_.end(), [&](float m) { return m > threshold; }));
  std::size_t ties = k - above, taken = 0;
  for (std::size_t i = 0; i < n && taken < k; ++i) {
    const float m = magnitude(gradient[i]);
    if (m > threshold || (m == threshold && ties > 0)) {
      if (m == threshold) --ties;
      const auto index = static_cast<std::uint32_t>(i);
      std::memcpy(indices + 4 * taken, &index, 4);
      std::memcpy(values + 4 * taken, &gradient[i], 4);
      ++taken;
    }
  }
  LACONIC_ENFORCE(taken == k, "selected ", taken, " entries, expected k=", k);
}

void TopkCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() >= 8, "expected a topk payload of at least 8 bytes, got ",
                  payload.size());
  std::uint32_t header[2];
  std::memcpy(header, payload.data(), sizeof header);
  const std::size_t n = header[0], k = header[1];
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(),
                  " elements, got one for ", n);
  LACONIC_ENFORCE(payload.size() == topk_payload_bytes(k), "expected ", topk_payload_bytes(k),
                  " payload bytes for k=", k, ", got ", payload.size());
  const std::uint8_t* indices = payload.data() + 8;
  const std::uint8_t* values = indices + 4 * k;
  for (std::size_t i = 0; i < k; ++i) {
    std::uint32_t index;
    float value;
    std::memcpy(&index, indices + 4 * i, 4);
    std::memcpy(&value, values + 4 * i, 4);
    LACONIC_ENFORCE(index < n, "payload index ", index, " out of range for ", n, " elements");
    dense[index] += value;
  }
}

void TopkCompressor::compress(std::span<const float> gradient, Payload& payload) {
  if (options_.error_feedback)
    feedback_.compress(codec_, gradient, payload);
  else
    codec_.compress(gradient, payload);
}

}  // namespace laconic::compress
