#include "engine/compress/none.hpp"

#include <cstring>

#include "engine/core/error.hpp"

namespace laconic::compress {

void NoneCompressor::compress(std::span<const float> gradient, Payload& payload) {
  payload.resize(gradient.size_bytes());
  std::memcpy(payload.data(), gradient.data(), gradient.size_bytes());
}

void NoneCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() == dense.size_bytes(), "expected ", dense.size_bytes(), " payload bytes, got ",
                  payload.size());
  const float* values = reinterpret_cast<const float*>(payload.data());
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] += values[i];
}

}  // namespace laconic::compress
