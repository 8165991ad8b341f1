#include "engine/compress/quantized_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<QuantizedAllreduceOptions> QuantizedAllreduceOptions::fields() {
  using O = QuantizedAllreduceOptions;
  return OptionFields<O>()
      .integer("bits", &O::bits, "bits per element: 8 (levels -127..127) or 4 (levels -7..7)", closed(4, 8))
      .integer("chunk", &O::chunk, "elements sharing one float32 scale (their largest magnitude)", at_least(1))
      .choice("rounding", &O::rounding,
              "\"stochastic\": up with probability the fraction left (unbiased); \"nearest\": to the closest level",
              {{LevelRounding::Stochastic, "stochastic"}, {LevelRounding::Nearest, "nearest"}})
      .flag("gather", &O::gather,
            "under allreduce, gather every worker's quantized gradient and sum them in fp32 (each worker receives p-1 "
            "payloads) instead of summing in the ring, requantized at each hop")
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.bits != 4 && o.bits != 8)
          throw ConfigError(str_cat(spec.name, ".bits must be 4 or 8, got ", o.bits));
      });
}

unsigned largest_level(unsigned bits) { return (1u << (bits - 1)) - 1; }

std::size_t chunk_quantized_bytes(std::size_t n, unsigned bits, std::size_t chunk) {
  return 4 * ((n + chunk - 1) / chunk) + (n * bits + 7) / 8;
}

ChunkQuantizer::ChunkQuantizer(unsigned bits, std::size_t chunk, LevelRounding rounding)
    : bits_(bits), chunk_(chunk), rounding_(rounding), stream_(derive_seed(0, streams::kQuantizedRounding)) {
  LACONIC_ENFORCE(bits == 4 || bits == 8, "quantized bits must be 4 or 8, got ", bits);
  LACONIC_ENFORCE(chunk >= 1, "quantized chunk must be >= 1");
}

namespace {

// The largest magnitude of `values`, or NaN when one is NaN.
float largest_magnitude(std::span<const float> values) {
  float largest = 0;
  for (float v : values) {
    const float a = std::abs(v);
    if (!(a <= largest)) largest = std::isnan(largest) ? largest : a;
  }
  return largest;
}

// Writes `level + offset` of element i at its place: a byte at 8 bits, a nibble at 4 (element i
// in the low half of byte i / 2 when i is even).
void put_level(std::uint8_t* codes, unsigned bits, std::size_t i, unsigned stored) {
  if (bits == 8) {
    codes[i] = static_cast<std::uint8_t>(stored);
    return;
  }
  std::uint8_t& byte = codes[i / 2];
  byte = (i % 2 == 0) ? static_cast<std::uint8_t>((byte & 0xF0u) | stored)
                      : static_cast<std::uint8_t>((byte & 0x0Fu) | (stored << 4));
}

unsigned get_level(const std::uint8_t* codes, unsigned bits, std::size_t i) {
  if (bits == 8) return codes[i];
  return (i % 2 == 0) ? (codes[i / 2] & 0x0Fu) : (codes[i / 2] >> 4);
}

}  // namespace

void ChunkQuantizer::encode(std::span<const float> in, std::span<std::uint8_t> out) const {
  const std::size_t n = in.size(), chunks = (n + chunk_ - 1) / chunk_;
  LACONIC_ENFORCE(out.size() == bytes(n), "quantized encode into ", out.size(), " bytes, needs ", bytes(n));
  if (n == 0) return;
  std::uint8_t* codes = out.data() + 4 * chunks;
  std::memset(codes, 0, out.size() - 4 * chunks);
  const float top = static_cast<float>(largest_level(bits_));
  const bool stochastic = rounding_ == LevelRounding::Stochastic;
  if (stochastic) {
    uniforms_.resize((n + UniformStream::kBlock - 1) / UniformStream::kBlock * UniformStream::kBlock);
    stream_.fill(uniforms_.data(), uniforms_.size());
  }
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * chunk_, end = std::min(n, begin + chunk_);
    const float largest = largest_magnitude(in.subspan(begin, end - begin));
    const float scale = largest / top;
    std::memcpy(out.data() + 4 * c, &scale, sizeof scale);
    // A chunk of zeros, or one holding an inf or a NaN: level 0 everywhere (the scale says which).
    const float inverse = (largest > 0 && std::isfinite(largest)) ? top / largest : 0.0f;
    for (std::size_t i = begin; i < end; ++i) {
      const float y = in[i] * inverse;
      const float level = stochastic ? std::floor(y + uniforms_[i]) : std::nearbyint(y);
      const float clamped = std::clamp(level, -top, top);
      put_level(codes, bits_, i, static_cast<unsigned>(static_cast<int>(clamped) + static_cast<int>(top)));
    }
  }
}

void ChunkQuantizer::decode(std::span<const std::uint8_t> in, std::span<float> out) const {
  const std::size_t n = out.size(), chunks = (n + chunk_ - 1) / chunk_;
  LACONIC_ENFORCE(in.size() == bytes(n), "quantized decode of ", in.size(), " bytes, expected ", bytes(n));
  const std::uint8_t* codes = in.data() + 4 * chunks;
  const int top = static_cast<int>(largest_level(bits_));
  for (std::size_t c = 0; c < chunks; ++c) {
    float scale;
    std::memcpy(&scale, in.data() + 4 * c, sizeof scale);
    const std::size_t begin = c * chunk_, end = std::min(n, begin + chunk_);
    for (std::size_t i = begin; i < end; ++i)
      out[i] = static_cast<float>(static_cast<int>(get_level(codes, bits_, i)) - top) * scale;
  }
}

QuantizedAllreduceCompressor::QuantizedAllreduceCompressor(QuantizedAllreduceOptions options)
    : options_(options),
      quantizer_(static_cast<unsigned>(options.bits), static_cast<std::size_t>(options.chunk), options.rounding) {}

Capabilities QuantizedAllreduceCompressor::capabilities() const {
  const TransitFormat format = options_.bits == 8 ? TransitFormat::Int8 : TransitFormat::Int4;
  return {.summable = false,
          .separable_by_layer = true,
          .fixed_size = true,
          .summed_in_transit = options_.gather ? TransitFormat::None : format};
}

void QuantizedAllreduceCompressor::set_seed(std::uint64_t run_seed, int rank) {
  LACONIC_ENFORCE(rank >= 0, "rank must be >= 0, got ", rank);
  quantizer_.stream().reseed(derive_seed(run_seed, streams::kQuantizedRounding + static_cast<std::uint64_t>(rank)));
}

void QuantizedAllreduceCompressor::compress(std::span<const float> gradient, Payload& payload) {
  payload.resize(4 + quantizer_.bytes(gradient.size()));
  write_element_count(payload, gradient.size());
  quantizer_.encode(gradient, std::span<std::uint8_t>(payload).subspan(4));
}

void QuantizedAllreduceCompressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 4, dense.size(), "quantized_allreduce");
  LACONIC_ENFORCE(payload.size() == 4 + quantizer_.bytes(n), "quantized_allreduce payload of ", payload.size(),
                  " bytes for ", n, " elements, expected ", 4 + quantizer_.bytes(n));
  decoded_.resize(n);
  quantizer_.decode(std::span<const std::uint8_t>(payload).subspan(4), decoded_);
  for (std::size_t i = 0; i < n; ++i) dense[i] += decoded_[i];
}

}  // namespace laconic::compress
