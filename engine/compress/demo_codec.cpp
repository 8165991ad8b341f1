#include "engine/compress/demo_codec.hpp"

#include <algorithm>
#include <cstring>

#include "engine/core/error.hpp"

namespace laconic::compress {

void DemoCodec::set_layer_shapes(const std::vector<LayerShape>& shapes) {
  layers_.clear();
  std::size_t offset = 0;
  for (const LayerShape& shape : shapes) {
    const std::vector<std::int64_t> dims(shape.begin(), shape.end());
    DctChunks chunks(dims, chunk_);
    const std::size_t k = std::clamp<std::size_t>(static_cast<std::size_t>(topk_), 1, chunks.chunk_elements());
    layers_.push_back({chunks, offset, k});
    offset += chunks.elements();
  }
  delta_.assign(offset, 0.0f);
  coefficients_.assign(offset, 0.0f);
  decoded_.assign(offset, 0.0f);
  senders_.assign(offset, 0);
}

std::size_t DemoCodec::payload_size() const {
  std::size_t bytes = 0;
  for (const Layer& l : layers_) bytes += l.chunks.chunks() * l.k * (sizeof(std::uint16_t) + sizeof(float));
  return bytes;
}

void DemoCodec::compress(std::span<const float> update, Payload& payload) {
  LACONIC_ENFORCE(update.size() == delta_.size(), "DeMo's codec was set up for ", delta_.size(),
                  " elements and got ", update.size());
  const auto decay = static_cast<float>(decay_);
  for (std::size_t i = 0; i < update.size(); ++i) delta_[i] = decay * delta_[i] + update[i];
  payload.resize(payload_size());
  std::uint8_t* out = payload.data();
  for (const Layer& l : layers_) {
    const std::size_t n = l.chunks.elements();
    const std::span<float> delta(delta_.data() + l.offset, n), coefficients(coefficients_.data() + l.offset, n);
    l.chunks.encode(delta, coefficients);
    const ChunkTopk top = extract_topk(coefficients, l.chunks.chunk_elements(), l.k);
    std::memcpy(out, top.index.data(), top.index.size() * sizeof(std::uint16_t));
    out += top.index.size() * sizeof(std::uint16_t);
    std::memcpy(out, top.value.data(), top.value.size() * sizeof(float));
    out += top.value.size() * sizeof(float);
    // What went out leaves the momentum: its own coefficients, decoded.
    l.chunks.subtract_decoded(top, delta);
  }
}

void DemoCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() == payload_size() && dense.size() == delta_.size(), "DeMo payload of ",
                  payload.size(), " bytes for ", dense.size(), " elements; expected ", payload_size(), " and ",
                  delta_.size());
  const std::uint8_t* in = payload.data();
  for (const Layer& l : layers_) {
    const std::size_t sent = l.chunks.chunks() * l.k, chunk = l.chunks.chunk_elements();
    const std::uint8_t* values = in + sent * sizeof(std::uint16_t);
    for (std::size_t i = 0; i < sent; ++i) {
      std::uint16_t position;
      float value;
      std::memcpy(&position, in + i * sizeof position, sizeof position);
      std::memcpy(&value, values + i * sizeof value, sizeof value);
      const std::size_t at = l.offset + (i / l.k) * chunk + position;
      LACONIC_ENFORCE(position < chunk, "DeMo payload position ", position, " in a chunk of ", chunk);
      dense[at] += value;
      ++senders_[at];
    }
    in = values + sent * sizeof(float);
  }
}

void DemoCodec::aggregate(std::span<float> sum, int /*workers*/) const {
  // The mean over the workers that sent each coefficient, not over all of them (demo.py's
  // scatter_reduce "mean"), then each layer decoded.
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (senders_[i] > 1) sum[i] /= static_cast<float>(senders_[i]);
    senders_[i] = 0;
  }
  for (const Layer& l : layers_) {
    const std::size_t n = l.chunks.elements();
    const std::span<float> layer(sum.data() + l.offset, n), decoded(decoded_.data() + l.offset, n);
    l.chunks.decode(layer, decoded);
    std::copy(decoded.begin(), decoded.end(), layer.begin());
  }
}

}  // namespace laconic::compress
