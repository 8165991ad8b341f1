#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct UniformOptions {
  std::int64_t bits = 8;
  bool error_feedback = false;

  static OptionFields<UniformOptions> fields();
};

/// Bytes of a uniform payload for n elements of `bits` bits: 12 (n, min, max) +
/// packed_bytes(n, bits).
std::size_t uniform_payload_bytes(std::size_t n, unsigned bits);

/// Width of one of the 2^bits bins over [min, max]: (max - min) / 2^bits.
float uniform_bin_width(float min, float max, unsigned bits);

/// Uniform quantization without error feedback. Wire layout (little-endian):
///   uint32 n | float32 min | float32 max | n bin indices of `bits` bits, LSB-first, zero-padded
/// Element x goes to bin floor((x - min) / width) clamped to [0, 2^bits - 1] and decodes to the
/// bin centre min + (i + 0.5) * width. Constant input (max == min) sends bin 0 and decodes
/// exactly; a NaN anywhere sends min = max = NaN, and an infinite range sends bin 0 everywhere
/// (both decode to non-finite values, so the divergence shows).
class UniformCodec : public Compressor {
 public:
  /// `isa`: which compiled loops run (all give the same payload); the CPU's best by default.
  explicit UniformCodec(unsigned bits, Isa isa = best_isa());
  std::string name() const override { return "uniform"; }
  Capabilities capabilities() const override { return {.summable = false}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  unsigned bits_;
  Isa isa_;
};

/// Deterministic fixed N-bit min-max quantization to bin centres (the "fixed N-bit" baseline
/// of Øland & Raj 2015, "Reducing communication overhead in distributed learning by an order of
/// magnitude (almost)").
class UniformCompressor : public WithErrorFeedback<UniformCodec> {
 public:
  explicit UniformCompressor(UniformOptions options)
      : WithErrorFeedback(options.error_feedback, static_cast<unsigned>(options.bits)) {}
};

}  // namespace laconic::compress
