#pragma once
#include <bit>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

/// One element of "residual = corrected - decoded" as error feedback's generic path computes it
/// (negate, add the decoded value, negate back), NaN signs included: the negations are sign-bit
/// flips, which the compiler cannot fold into a subtraction. For the codecs' fused passes.
inline float minus_decoded(float residual, float decoded) {
  auto flip = [](float x) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) ^ 0x80000000u); };
  return flip(flip(residual) + decoded);
}

/// Error feedback (Seide et al. 2014; Stich et al. 2018; Algorithm 1 of Eghlidi & Jaggi 2020):
/// what compression drops is kept in a residual and added to the next gradient, so that
/// sent + residual always equals everything fed in.
class ErrorFeedback {
 public:
  /// Compresses `gradient + residual` with `inner`, then keeps what the payload does not carry.
  /// Works in place: the only state is the residual (one float per element). Codecs may fuse
  /// the passes, bit for bit as the generic ones: `compress_corrected(gradient, residual,
  /// payload)` adds the gradient into the residual while it encodes, and
  /// `subtract_decoded(payload, residual)` takes the payload off the residual without the
  /// generic negate, decompress_add and negate back; `compress_with_feedback(gradient, residual,
  /// payload)` does all three, taking each sent element off the residual as it encodes it.
  template <class Codec>
  void compress(Codec& inner, std::span<const float> gradient, Payload& payload) {
    fit(gradient.size());
    if constexpr (requires { inner.compress_with_feedback(gradient, std::span<float>(residual_), payload); }) {
      inner.compress_with_feedback(gradient, residual_, payload);
      return;
    }
    if constexpr (requires { inner.compress_corrected(gradient, std::span<float>(residual_), payload); })
      inner.compress_corrected(gradient, residual_, payload);
    else
      inner.compress(add_gradient(gradient), payload);
    if constexpr (requires { inner.subtract_decoded(payload, std::span<float>(residual_)); })
      inner.subtract_decoded(payload, residual_);
    else
      subtract_decoded(inner, payload);
  }

  /// The residual after the last compress() (empty before the first).
  std::span<const float> residual() const { return residual_; }
  void save_state(StateWriter& out) const { out.array(residual_); }
  void load_state(StateReader& in) { in.array(residual_); }

 private:
  // Zeros before the first step; then the gradient must keep its length.
  void fit(std::size_t n);
  // residual += gradient; returns the corrected gradient.
  std::span<const float> add_gradient(std::span<const float> gradient);
  // residual = corrected - decoded payload, through decompress_add.
  void subtract_decoded(const Compressor& inner, const Payload& payload);

  std::vector<float> residual_;
};

/// A stateless codec made into a compressor with an `error_feedback` switch: the one shape every
/// `XCompressor` of this folder shares (`class TopkCompressor : public
/// WithErrorFeedback<TopkCodec>`). Everything but compress() is the codec's.
template <class Codec>
class WithErrorFeedback : public Compressor {
 public:
  /// Builds the codec from `codec_args`.
  template <class... Args>
  explicit WithErrorFeedback(bool error_feedback, Args&&... codec_args)
      : codec_(std::forward<Args>(codec_args)...), error_feedback_(error_feedback) {}

  std::string name() const override { return codec_.name(); }
  /// The codec's: error feedback changes what is sent, not how it travels.
  Capabilities capabilities() const override { return codec_.capabilities(); }
  const WireCodec* transit_codec() const override { return codec_.transit_codec(); }
  void compress(std::span<const float> gradient, Payload& payload) override {
    if (error_feedback_)
      feedback_.compress(codec_, gradient, payload);
    else
      codec_.compress(gradient, payload);
  }
  void decompress_add(const Payload& payload, std::span<float> dense) const override {
    codec_.decompress_add(payload, dense);
  }
  void set_seed(std::uint64_t run_seed, int rank) override { codec_.set_seed(run_seed, rank); }
  void save_state(StateWriter& out) const override {
    codec_.save_state(out);
    feedback_.save_state(out);
  }
  void load_state(StateReader& in) override {
    codec_.load_state(in);
    feedback_.load_state(in);
  }
  void set_layer_shapes(const std::vector<LayerShape>& shapes) override { codec_.set_layer_shapes(shapes); }
  void aggregate(std::span<float> sum, int workers) const override { codec_.aggregate(sum, workers); }

  /// What error feedback holds back (empty without error feedback).
  std::span<const float> residual() const { return feedback_.residual(); }
  const Codec& codec() const { return codec_; }

 protected:
  void on_step(const StepPoint& point) override { codec_.advance(point); }

 private:
  Codec codec_;
  bool error_feedback_;
  ErrorFeedback feedback_;
};

}  // namespace laconic::compress
