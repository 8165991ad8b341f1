#include "engine/compress/sparse_pairs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine/compress/error_feedback.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t sparse_pairs_bytes(std::size_t count) { return 8 + count * (4 + 4); }

namespace {

// Checks the payload against dense.size() elements, then calls apply(dense[index], value) for
// every pair.
template <class Apply>
void for_each_pair(const Payload& payload, std::span<float> dense, const char* what, Apply apply) {
  LACONIC_ENFORCE(payload.size() >= 8, "expected a ", what, " payload of at least 8 bytes, got ", payload.size());
  std::uint32_t header[2];
  std::memcpy(header, payload.data(), sizeof header);
  const std::size_t n = header[0], k = header[1];
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(), " elements, got one for ", n);
  LACONIC_ENFORCE(payload.size() == sparse_pairs_bytes(k), "expected ", sparse_pairs_bytes(k),
                  " payload bytes for k=", k, ", got ", payload.size());
  const std::uint8_t* indices = payload.data() + 8;
  const std::uint8_t* values = indices + 4 * k;
  auto index_at = [indices](std::size_t i) {
    std::uint32_t index;
    std::memcpy(&index, indices + 4 * i, 4);
    return index;
  };
  // Every index checked before any is used, in a loop that vectorizes (the largest one); the
  // first one out of range is named.
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < k; ++i) largest = std::max(largest, index_at(i));
  if (k > 0 && largest >= n)
    for (std::size_t i = 0; i < k; ++i)
      LACONIC_ENFORCE(index_at(i) < n, "payload index ", index_at(i), " out of range for ", n, " elements");
  for (std::size_t i = 0; i < k; ++i) {
    float value;
    std::memcpy(&value, values + 4 * i, 4);
    apply(dense[index_at(i)], value);
  }
}

}  // namespace

void add_sparse_pairs(const Payload& payload, std::span<float> dense, const char* what) {
  for_each_pair(payload, dense, what, [](float& d, float value) { d += value; });
}

void subtract_sparse_pairs(const Payload& payload, std::span<float> residual, const char* what) {
  for_each_pair(payload, residual, what, [](float& r, float value) { r = minus_decoded(r, value); });
}

}  // namespace laconic::compress
