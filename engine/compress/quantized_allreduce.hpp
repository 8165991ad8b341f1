#pragma once
// 8-bit and 4-bit gradients summed in the ring as they travel: each chunk of elements shares one
// fp32 scale (its largest magnitude over the largest level), each element goes out as a signed
// level, rounded stochastically (unbiased) or to the nearest level, and every hop of the ring's
// reduce-scatter decodes the partial sum it got, adds its own in fp32 and quantizes the sum again
// with a new scale (the requantization of INTELLECT-1's int8 all-reduce, CGX and ZeRO++'s qgZ).
// The bytes are the fp32 ring's at a quarter (8 bits) or an eighth (4 bits), plus the scales,
// whatever the number of workers: docs/compressors.md, "quantized_allreduce".
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

/// How a value between two levels picks one.
enum class LevelRounding { Stochastic, Nearest };

struct QuantizedAllreduceOptions {
  std::int64_t bits = 8;
  std::int64_t chunk = 1024;
  LevelRounding rounding = LevelRounding::Stochastic;
  bool gather = false;

  static OptionFields<QuantizedAllreduceOptions> fields();
};

/// The largest level of `bits` bits, symmetric around 0: 2^(bits - 1) - 1 (127 for 8, 7 for 4).
unsigned largest_level(unsigned bits);

/// Bytes of n elements quantized to `bits` bits with a scale per `chunk` elements:
/// 4 * ceil(n / chunk) + ceil(n * bits / 8).
std::size_t chunk_quantized_bytes(std::size_t n, unsigned bits, std::size_t chunk);

/// The wire format. Layout: float32 scale[ceil(n / chunk)] | n levels of `bits` bits, each
/// stored as level + largest_level(bits), LSB-first (two to a byte at 4 bits). Chunk c's scale is
/// max |x| over its elements / largest_level; element x goes to level x / scale, rounded as asked
/// and clamped to +-largest_level, and decodes to level * scale. A chunk of zeros has scale 0; a
/// chunk with an inf or NaN sends level 0 everywhere and its scale (inf or NaN), so it decodes to
/// NaN and the divergence shows. Stochastic rounding draws from the codec's own stream, one
/// uniform per element rounded up to a whole UniformStream::kBlock per encode().
class ChunkQuantizer : public WireCodec {
 public:
  ChunkQuantizer(unsigned bits, std::size_t chunk, LevelRounding rounding);
  std::size_t bytes(std::size_t n) const override { return chunk_quantized_bytes(n, bits_, chunk_); }
  void encode(std::span<const float> in, std::span<std::uint8_t> out) const override;
  void decode(std::span<const std::uint8_t> in, std::span<float> out) const override;
  /// Re-encoding a decoded sum may pick another scale: the ring, which encodes each partial sum
  /// once, is the only collective that runs it.
  bool idempotent() const override { return false; }

  UniformStream& stream() const { return stream_; }

 private:
  unsigned bits_;
  std::size_t chunk_;
  LevelRounding rounding_;
  mutable UniformStream stream_;
  mutable std::vector<float> uniforms_;
};

/// quantized_allreduce: under allreduce, summed in the ring in 8 or 4 bits, requantized at each
/// hop (summed_in_transit int8 or int4, ChunkQuantizer); elsewhere (allgather, parameter server,
/// or with `gather`) each worker's gradient quantized once and gathered. Payload: uint32 n | the
/// ChunkQuantizer's bytes. The rounding's stream is private to each rank (streams::
/// kQuantizedRounding + rank) and checkpointed.
class QuantizedAllreduceCompressor : public Compressor {
 public:
  explicit QuantizedAllreduceCompressor(QuantizedAllreduceOptions options);
  std::string name() const override { return "quantized_allreduce"; }
  Capabilities capabilities() const override;
  const WireCodec* transit_codec() const override { return options_.gather ? nullptr : &quantizer_; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void set_seed(std::uint64_t run_seed, int rank) override;
  void save_state(StateWriter& out) const override {
    out.array(std::span<const std::uint64_t>(quantizer_.stream().state_words()));
  }
  void load_state(StateReader& in) override { in.array_exact(quantizer_.stream().state_words()); }

 private:
  QuantizedAllreduceOptions options_;
  ChunkQuantizer quantizer_;
  mutable std::vector<float> decoded_;
};

}  // namespace laconic::compress
