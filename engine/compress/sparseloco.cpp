#include "engine/compress/sparseloco.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "engine/compress/bitpack.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {
namespace {

// SparseLoCo's levels for `values`: their mean `shift`; a level's width `scale` = range x their
// unbiased standard deviation / levels (1 where that is 0 or not finite); value v at level
// clamp(round((v - shift) / scale + levels / 2), 0, levels - 1) (0 where that is NaN); each level
// decoded as the mean of the values at it (0 where none is).
struct Levels {
  std::vector<std::uint32_t> level;
  std::vector<float> decoded;
};

Levels sparseloco_levels(const std::vector<float>& values, std::size_t levels, double range) {
  Levels out{std::vector<std::uint32_t>(values.size()), std::vector<float>(levels, 0.0f)};
  if (values.empty()) return out;
  double shift = 0;
  for (float v : values) shift += v;
  shift /= static_cast<double>(values.size());
  double squares = 0;
  for (float v : values) squares += (v - shift) * (v - shift);
  const double deviation = values.size() > 1 ? std::sqrt(squares / static_cast<double>(values.size() - 1)) : 0.0;
  double scale = range * deviation / static_cast<double>(levels);
  if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0;
  std::vector<double> sums(levels, 0.0);
  std::vector<std::size_t> counts(levels, 0);
  const double offset = static_cast<double>(levels / 2), top = static_cast<double>(levels - 1);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double at = std::round((values[i] - shift) / scale + offset);
    // A NaN (of the values, or of their mean) at the lowest level: clamp would pass it on.
    out.level[i] = std::isnan(at) ? 0u : static_cast<std::uint32_t>(std::clamp(at, 0.0, top));
    sums[out.level[i]] += values[i];
    ++counts[out.level[i]];
  }
  for (std::size_t l = 0; l < levels; ++l)
    if (counts[l] > 0) out.decoded[l] = static_cast<float>(sums[l] / static_cast<double>(counts[l]));
  return out;
}

}  // namespace

OptionFields<SparselocoOptions> SparselocoOptions::fields() {
  using O = SparselocoOptions;
  return OptionFields<O>()
      .integer("chunk", &O::chunk, "elements of a chunk: each layer's in runs of chunk, the last one shorter",
               closed(2, 65536))
      .integer("topk", &O::topk, "elements of largest |error| each chunk sends", at_least(1))
      .integer("bits", &O::bits, "bits of each value sent: 2^bits levels", closed(1, 8))
      .number("decay", &O::decay, "the error's decay before each compression (its part of outer momentum)",
              closed(0, 1))
      .number("range", &O::range, "standard deviations the levels span", above(0));
}

unsigned SparselocoCompressor::position_bits() const {
  unsigned bits = 1;
  while ((std::uint64_t{1} << bits) < static_cast<std::uint64_t>(options_.chunk)) ++bits;
  return bits;
}

void SparselocoCompressor::set_layer_shapes(const std::vector<LayerShape>& shapes) {
  layers_.clear();
  std::size_t offset = 0;
  const auto chunk = static_cast<std::size_t>(options_.chunk), k = static_cast<std::size_t>(options_.topk);
  for (const LayerShape& shape : shapes) {
    const std::size_t size = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
    const std::size_t whole = size / chunk, rest = size % chunk;
    layers_.push_back({offset, size, whole * std::min(k, chunk) + std::min(k, rest)});
    offset += size;
  }
  error_.assign(offset, 0.0f);
}

void SparselocoCompressor::ensure_layers(std::size_t elements) {
  if (layers_.empty()) set_layer_shapes({{elements}});
  LACONIC_ENFORCE(elements == error_.size(), "sparseloco was set up for ", error_.size(), " elements and got ",
                  elements);
}

std::size_t SparselocoCompressor::layer_bytes(const Layer& layer) const {
  return levels() * sizeof(float) + packed_bytes(layer.sent, position_bits()) +
         packed_bytes(layer.sent, static_cast<unsigned>(options_.bits));
}

std::size_t SparselocoCompressor::payload_size() const {
  std::size_t bytes = 0;
  for (const Layer& l : layers_) bytes += layer_bytes(l);
  return bytes;
}

void SparselocoCompressor::select(const Layer& layer, std::vector<std::uint32_t>& selected) const {
  selected.clear();
  const auto chunk = static_cast<std::size_t>(options_.chunk);
  const float* e = error_.data() + layer.offset;
  std::vector<std::uint32_t> order;
  for (std::size_t first = 0; first < layer.size; first += chunk) {
    const std::size_t n = std::min(chunk, layer.size - first), k = std::min(static_cast<std::size_t>(options_.topk), n);
    order.resize(n);
    std::iota(order.begin(), order.end(), static_cast<std::uint32_t>(first));
    // NaN as the largest magnitude (as topk does), so that the order stays strict and weak.
    const auto magnitude = [e](std::uint32_t i) {
      return std::isnan(e[i]) ? std::numeric_limits<float>::infinity() : std::fabs(e[i]);
    };
    const auto larger = [&magnitude](std::uint32_t a, std::uint32_t b) {
      const float ma = magnitude(a), mb = magnitude(b);
      return ma > mb || (ma == mb && a < b);
    };
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k - 1), order.end(), larger);
    std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
    selected.insert(selected.end(), order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

void SparselocoCompressor::compress(std::span<const float> gradient, Payload& payload) {
  ensure_layers(gradient.size());
  const auto decay = static_cast<float>(options_.decay);
  for (std::size_t i = 0; i < gradient.size(); ++i) error_[i] = decay * error_[i] + gradient[i];
  payload.resize(payload_size());
  std::uint8_t* out = payload.data();
  const auto chunk = static_cast<std::uint32_t>(options_.chunk);
  std::vector<std::uint32_t> selected, positions;
  std::vector<float> values;
  for (const Layer& l : layers_) {
    select(l, selected);
    float* e = error_.data() + l.offset;
    values.clear();
    positions.clear();
    for (std::uint32_t at : selected) {
      values.push_back(e[at]);
      positions.push_back(at % chunk);
    }
    const Levels q = sparseloco_levels(values, levels(), options_.range);
    std::memcpy(out, q.decoded.data(), q.decoded.size() * sizeof(float));
    out += q.decoded.size() * sizeof(float);
    pack_bits_to(positions.data(), positions.size(), position_bits(), out);
    out += packed_bytes(positions.size(), position_bits());
    pack_bits_to(q.level.data(), q.level.size(), static_cast<unsigned>(options_.bits), out);
    out += packed_bytes(q.level.size(), static_cast<unsigned>(options_.bits));
    for (std::size_t i = 0; i < selected.size(); ++i) e[selected[i]] -= q.decoded[q.level[i]];
  }
}

void SparselocoCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() == payload_size() && dense.size() == error_.size(), "sparseloco payload of ",
                  payload.size(), " bytes for ", dense.size(), " elements; expected ", payload_size(), " and ",
                  error_.size());
  const std::uint8_t* in = payload.data();
  const auto chunk = static_cast<std::size_t>(options_.chunk);
  std::vector<float> decoded(levels());
  std::vector<std::uint32_t> positions, level;
  for (const Layer& l : layers_) {
    std::memcpy(decoded.data(), in, decoded.size() * sizeof(float));
    in += decoded.size() * sizeof(float);
    positions.resize(l.sent);
    level.resize(l.sent);
    unpack_bits_from(in, l.sent, position_bits(), positions.data());
    in += packed_bytes(l.sent, position_bits());
    unpack_bits_from(in, l.sent, static_cast<unsigned>(options_.bits), level.data());
    in += packed_bytes(l.sent, static_cast<unsigned>(options_.bits));
    // The i-th position sent belongs to the chunk that i falls in, in the order select() took them.
    std::size_t i = 0;
    for (std::size_t first = 0; first < l.size; first += chunk) {
      const std::size_t n = std::min(chunk, l.size - first), k = std::min(static_cast<std::size_t>(options_.topk), n);
      for (std::size_t j = 0; j < k; ++j, ++i) {
        LACONIC_ENFORCE(positions[i] < n, "sparseloco payload position ", positions[i], " in a chunk of ", n);
        dense[l.offset + first + positions[i]] += decoded[level[i]];
      }
    }
  }
}

}  // namespace laconic::compress
