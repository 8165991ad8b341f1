#include "engine/compress/sparse_pairs.hpp"

#include <cstdint>
#include <cstring>

#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t sparse_pairs_bytes(std::size_t count) { return 8 + count * (4 + 4); }

void add_sparse_pairs(const Payload& payload, std::span<float> dense, const char* what) {
  LACONIC_ENFORCE(payload.size() >= 8, "expected a ", what, " payload of at least 8 bytes, got ", payload.size());
  std::uint32_t header[2];
  std::memcpy(header, payload.data(), sizeof header);
  const std::size_t n = header[0], k = header[1];
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(), " elements, got one for ", n);
  LACONIC_ENFORCE(payload.size() == sparse_pairs_bytes(k), "expected ", sparse_pairs_bytes(k),
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

}  // namespace laconic::compress
