#pragma once
// A span of floats as the bytes a message carries, for the collectives' files (the ring, the
// halving-doubling and the one-shot allreduce, the allgathers).
#include <cstdint>
#include <span>

namespace laconic::comm::detail {

inline std::span<const std::uint8_t> float_bytes(std::span<const float> s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size_bytes()};
}
inline std::span<std::uint8_t> mutable_float_bytes(std::span<float> s) {
  return {reinterpret_cast<std::uint8_t*>(s.data()), s.size_bytes()};
}

}  // namespace laconic::comm::detail
