#pragma once
// The header most payloads start with: uint32 n, the number of elements they encode, then
// codec-specific fields. Read here once for every codec, with the same checks and messages.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

/// The element count a payload of `codec` starts with, after checking that the payload holds
/// at least `header_bytes` bytes and that the count is `expected` (the length of the vector it is
/// decoded into). InvariantError otherwise: "expected a qsgd payload of at least 4 bytes, got
/// 2", "expected a payload for 10 elements, got one for 12".
std::size_t read_element_count(const Payload& payload, std::size_t header_bytes, std::size_t expected,
                               const char* codec);

/// The float32 at byte `at` of a payload's header (already checked to be there).
inline float header_float(const Payload& payload, std::size_t at) {
  float value;
  std::memcpy(&value, payload.data() + at, sizeof value);
  return value;
}

/// Writes n as the payload's first 4 bytes (the payload already sized).
inline void write_element_count(Payload& payload, std::size_t n) {
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, sizeof count);
}

}  // namespace laconic::compress
