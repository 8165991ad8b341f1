#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/private_stream_codec.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct TerngradOptions {
  bool error_feedback = false;

  static OptionFields<TerngradOptions> fields();
};

/// Bytes of a TernGrad payload for n elements: 8 (n, scale) + ceil(n / 4) (2 bits each).
std::size_t terngrad_payload_bytes(std::size_t n);

/// TernGrad without error feedback. Wire layout (little-endian):
///   uint32 n | float32 scale | n 2-bit codes, LSB-first, zero-padded
/// with scale = max |g_i| and code 0 -> 0, 1 -> +scale, 2 -> -scale (3 is refused). Element i
/// gets code 1 or 2 (by its sign) with probability |g_i| / scale, else 0. An all-zero gradient
/// sends scale 0 and all zeros; an inf or NaN scale sends all zeros and the receiver's
/// scale * 0 turns into NaN everywhere.
class TerngradCodec : public PrivateStreamCodec<Rng> {
 public:
  /// Private stochastic rounding: streams::kTerngradRounding. With Isa::Avx2 or above, long gradients are
  /// coded in four lanes of the same sequence of draws (the same bytes).
  explicit TerngradCodec(Isa isa = best_isa());
  std::string name() const override { return "terngrad"; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  Isa isa_;
};

/// TernGrad: each element becomes scale * sign(g) * Bernoulli(|g| / scale) with scale =
/// max |g|, unbiased, 2 bits per element (Wen et al. 2017, "TernGrad: Ternary Gradients to
/// Reduce Communication in Distributed Deep Learning"; one scale per tensor, no clipping).
class TerngradCompressor : public WithErrorFeedback<TerngradCodec> {
 public:
  explicit TerngradCompressor(TerngradOptions options) : WithErrorFeedback(options.error_feedback) {}
};

}  // namespace laconic::compress
