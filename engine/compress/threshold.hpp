#pragma once
#include <cstdint>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct ThresholdOptions {
  double tau = 0.001;
  bool error_feedback = true;

  static OptionFields<ThresholdOptions> fields();
};

/// Bytes of a Threshold payload carrying `count` entries: an 8-byte header (n, count as uint32)
/// and `count` (uint32 index, float32 value) pairs: 8 + 8*count.
std::size_t threshold_payload_bytes(std::size_t count);

/// Threshold sparsification without state: sends every element with |g| > tau, unscaled, indices
/// ascending; NaN counts as above any tau (sent on, like Top-k, so divergence shows).
///
/// Wire format (little-endian, packed; the Top-k layout): uint32 n, uint32 count, then count
/// uint32 indices, then count float32 values. Variable size, 8 + 8*count bytes; count may be 0.
/// Not summable (each worker sends its own indices).
class ThresholdCodec : public Compressor {
 public:
  /// `tau` is compared exactly as given: |g| > tau in real numbers, not after rounding to float.
  /// `isa`: which compiled loops write the pairs (all give the same payloads); the CPU's best by
  /// default.
  explicit ThresholdCodec(double tau, Isa isa = best_isa());
  std::string name() const override { return "threshold"; }
  Capabilities capabilities() const override { return {.summable = false, .sparse_pairs = true}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  /// Error feedback's whole step in two passes (see ErrorFeedback::compress): the gradient added
  /// into the residual while counting, then each sent element taken off the residual as its
  /// pair is written.
  void compress_with_feedback(std::span<const float> gradient, std::span<float> residual, Payload& payload);
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  // The largest float <= tau. For a float x, x > tau exactly when x > tau_below_, so the loop
  // compares floats and still honours the double tau the user wrote.
  float tau_below_;
  Isa isa_;
};

/// Threshold sparsification (Strom 2015, "Scalable distributed DNN training using commodity GPU
/// cloud computing"), with error feedback (Strom's residual) when the option is on.
class ThresholdCompressor : public WithErrorFeedback<ThresholdCodec> {
 public:
  explicit ThresholdCompressor(ThresholdOptions options) : WithErrorFeedback(options.error_feedback, options.tau) {}
};

}  // namespace laconic::compress
