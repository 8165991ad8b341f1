#pragma once
#include <cstddef>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct OnebitOptions {
  bool error_feedback = true;

  static OptionFields<OnebitOptions> fields();
};

/// Bytes of a onebit payload for n elements: a 12-byte header (n as uint32, mean_positive and
/// mean_negative as float32) and ceil(n / 8) bytes of sign bits.
std::size_t onebit_payload_bytes(std::size_t n);

/// 1-bit quantization without state: element i becomes one bit (set when it is < 0) and is
/// reconstructed as the mean of the elements on its side, mean_positive (of those >= 0) or
/// mean_negative (of those < 0); a side with no elements has mean 0.
/// Payload, host byte order: uint32 n | float32 mean_positive | float32 mean_negative |
/// ceil(n/8) bytes of sign bits (element i at byte 12 + i/8, bit i%8, least significant first).
class OnebitCodec : public Compressor {
 public:
  std::string name() const override { return "onebit"; }
  Capabilities capabilities() const override { return {.summable = false}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  /// Error feedback's compress of residual + gradient, adding the gradient into the residual in
  /// the same pass (see ErrorFeedback::compress).
  void compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload);
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Error feedback's residual -= the decoded payload in one pass (see ErrorFeedback::compress).
  void subtract_decoded(const Payload& payload, std::span<float> residual) const;
};

/// 1-bit SGD with error feedback (Seide et al. 2014, "1-Bit Stochastic Gradient Descent and its
/// Application to Data-Parallel Distributed Training of Speech DNNs"): p = g + e is quantized
/// by OnebitCodec and e = p - sent is carried to the next step. aggregate() is the mean.
class OnebitCompressor : public WithErrorFeedback<OnebitCodec> {
 public:
  explicit OnebitCompressor(OnebitOptions options) : WithErrorFeedback(options.error_feedback) {}
};

}  // namespace laconic::compress
