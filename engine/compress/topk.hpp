#pragma once
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/step_ratio.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct TopkOptions {
  StepRatio ratio = 0.01;
  bool error_feedback = true;

  static OptionFields<TopkOptions> fields();
};

/// k = ceil(ratio * n) for a gradient of n elements.
std::size_t topk_count(double ratio, std::size_t n);

/// Bytes of a Top-k payload carrying k of n elements: an 8-byte header (n, k as uint32) and
/// k (uint32 index, float32 value) pairs.
std::size_t topk_payload_bytes(std::size_t k);

/// Top-k without state: keeps the k entries of largest magnitude (ties at the threshold go to
/// the lowest indices), indices ascending.
class TopkCodec : public Compressor {
 public:
  explicit TopkCodec(StepRatio ratio) : ratio_(ratio) {}
  std::string name() const override { return "topk"; }
  Capabilities capabilities() const override { return {.summable = false, .sparse_pairs = true}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Error feedback's residual += gradient in the pass that collects the candidates, then
  /// compress(residual) (see ErrorFeedback::compress).
  void compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload);
  /// Error feedback's residual -= the decoded payload in one pass (see ErrorFeedback::compress).
  void subtract_decoded(const Payload& payload, std::span<float> residual) const;
 protected:
  void on_step(const StepPoint& point) override { ratio_.set_step(point); }

 private:
  // compress() of `gradient`, or with a residual compress_corrected(): the residual becomes
  // residual + gradient, and is what is compressed.
  void encode(std::span<const float> gradient, std::span<float> residual, Payload& payload);

  StepRatio ratio_;
  // Scratch reused across steps: candidate indices (ascending), their magnitudes, and a copy
  // that selection reorders.
  std::vector<std::uint32_t> candidates_;
  std::vector<float> candidate_magnitudes_;
  std::vector<float> scratch_;
};

/// Top-k sparsification (Aji & Heafield 2017; Stich et al. 2018 with error feedback).
class TopkCompressor : public WithErrorFeedback<TopkCodec> {
 public:
  explicit TopkCompressor(TopkOptions options) : WithErrorFeedback(options.error_feedback, options.ratio) {}
};

}  // namespace laconic::compress
