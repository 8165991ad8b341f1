#include "engine/compress/onebit_adam_codec.hpp"

#include <cmath>
#include <cstring>

#include "engine/core/error.hpp"

namespace laconic::compress {

void OnebitAdamCodec::set_layer_shapes(const std::vector<LayerShape>& shapes) {
  layer_sizes_.clear();
  std::size_t total = 0;
  for (const LayerShape& shape : shapes) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    layer_sizes_.push_back(n);
    total += n;
  }
  error_.assign(total, 0.0f);
}

std::size_t OnebitAdamCodec::payload_size() const {
  if (!frozen_) return error_.size() * sizeof(float);
  std::size_t bytes = 0;
  for (std::size_t n : layer_sizes_) bytes += sizeof(float) + (n + 7) / 8;
  return bytes;
}

void OnebitAdamCodec::compress(std::span<const float> values, Payload& payload) {
  LACONIC_ENFORCE(values.size() == error_.size(), "1-bit Adam's codec was set up for ", error_.size(),
                  " elements and got ", values.size());
  payload.resize(payload_size());
  if (!frozen_) {
    std::memcpy(payload.data(), values.data(), values.size() * sizeof(float));
    return;
  }
  std::uint8_t* out = payload.data();
  std::size_t first = 0;
  for (std::size_t n : layer_sizes_) {
    float* e = error_.data() + first;
    const float* m = values.data() + first;
    double squares = 0;
    for (std::size_t i = 0; i < n; ++i) {
      e[i] += m[i];  // b = m + e, kept in e until what is sent is taken off
      squares += static_cast<double>(e[i]) * e[i];
    }
    const auto scale = static_cast<float>(std::sqrt(squares / static_cast<double>(n)));
    std::memcpy(out, &scale, sizeof scale);
    std::uint8_t* bits = out + sizeof scale;
    std::memset(bits, 0, (n + 7) / 8);
    for (std::size_t i = 0; i < n; ++i) {
      const auto negative = static_cast<std::uint8_t>(e[i] < 0);
      bits[i / 8] |= static_cast<std::uint8_t>(negative << (i % 8));
      e[i] -= scale - 2.0f * scale * static_cast<float>(negative);
    }
    out = bits + (n + 7) / 8;
    first += n;
  }
}

void OnebitAdamCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() == payload_size() && dense.size() == error_.size(), "1-bit Adam payload of ",
                  payload.size(), " bytes for ", dense.size(), " elements; expected ", payload_size(), " and ",
                  error_.size());
  if (!frozen_) {
    for (std::size_t i = 0; i < dense.size(); ++i) {
      float value;
      std::memcpy(&value, payload.data() + i * sizeof value, sizeof value);
      dense[i] += value;
    }
    return;
  }
  const std::uint8_t* in = payload.data();
  std::size_t first = 0;
  for (std::size_t n : layer_sizes_) {
    float scale;
    std::memcpy(&scale, in, sizeof scale);
    const std::uint8_t* bits = in + sizeof scale;
    // Branch-free: a set bit adds scale - 2 scale = -scale.
    float* out = dense.data() + first;
    for (std::size_t i = 0; i < n; ++i)
      out[i] += scale - 2.0f * scale * static_cast<float>((bits[i / 8] >> (i % 8)) & 1u);
    in = bits + (n + 7) / 8;
    first += n;
  }
}

}  // namespace laconic::compress
