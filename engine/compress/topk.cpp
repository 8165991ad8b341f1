#include "engine/compress/topk.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

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

void TopkCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "topk handles at most 2^32-1 ",
                  "elements, got ", n);
  const std::size_t k = topk_count(ratio_, n);
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  auto larger = [&](std::uint32_t a, std::uint32_t b) {
    return std::fabs(gradient[a]) > std::fabs(gradient[b]);
  };
  // O(n) selection of the k largest magnitudes; then ascending indices for a cache-friendly decode.
  if (k < n) std::nth_element(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(k),
                              order_.end(), larger);
  std::sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(k));

  payload.resize(topk_payload_bytes(k));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
  std::memcpy(payload.data(), header, sizeof header);
  std::uint8_t* indices = payload.data() + 8;
  std::uint8_t* values = indices + 4 * k;
  std::memcpy(indices, order_.data(), 4 * k);
  for (std::size_t i = 0; i < k; ++i) {
    float v = gradient[order_[i]];
    std::memcpy(values + 4 * i, &v, 4);
  }
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
