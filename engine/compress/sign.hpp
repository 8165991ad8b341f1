#pragma once
// Sign-based compressors: one bit per element, packed. signsgd and signum send bare signs and
// combine workers by majority vote; ef_signsgd sends the signs with one scale and error feedback.
// The sign-bit packing below is shared with onebit.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

/// Bytes holding n sign bits: ceil(n / 8).
std::size_t sign_bits_bytes(std::size_t n);

/// What pack_sign_bits_summed() adds up on the way (in double, so long vectors stay accurate).
struct SignSums {
  double positive = 0.0;      ///< sum of the elements >= 0 (a NaN lands here and stays visible)
  double negative = 0.0;      ///< sum of the elements < 0 (so <= 0)
  std::size_t negatives = 0;  ///< how many elements are < 0
};

/// Packs bit i = (values[i] < 0) into bits[i / 8] at bit i % 8, least significant bit first;
/// the unused high bits of the last byte are zero. `bits` has sign_bits_bytes(n) bytes.
/// Zero (and -0.0) packs as 0, i.e. as positive.
void pack_sign_bits(std::span<const float> values, std::uint8_t* bits);

/// pack_sign_bits() that also sums the positive and the negative elements in the same pass.
SignSums pack_sign_bits_summed(std::span<const float> values, std::uint8_t* bits);

/// pack_sign_bits_summed() of residual + gradient for error feedback: residual[i] += gradient[i]
/// (as ErrorFeedback adds them) in the same pass, then packed and summed.
SignSums pack_sign_bits_corrected(std::span<const float> gradient, std::span<float> residual, std::uint8_t* bits);

/// dense[i] += (bit i set ? if_negative : if_positive), for the layout of pack_sign_bits().
void add_sign_bits(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> dense);

/// residual[i] = -(-residual[i] + (bit i set ? if_negative : if_positive)): bit for bit what
/// negating, add_sign_bits and negating back give (error feedback's "corrected - sent"), in one
/// pass.
void subtract_sign_bits(const std::uint8_t* bits, float if_positive, float if_negative, std::span<float> residual);

/// Majority vote over a sum of +-1 votes: each entry becomes +1, -1, or 0 on a tie.
void majority_vote(std::span<float> sum);

/// Bytes of a signsgd / signum payload for n elements: a 4-byte header (n as uint32) and
/// ceil(n / 8) bytes of sign bits.
std::size_t sign_payload_bytes(std::size_t n);

/// Bytes of an ef_signsgd payload for n elements: an 8-byte header (n as uint32, scale as
/// float32) and ceil(n / 8) bytes of sign bits.
std::size_t scaled_sign_payload_bytes(std::size_t n);

/// Why signsgd and signum cannot exchange updates: a majority vote carries no magnitude.
inline constexpr const char* kMajorityVoteNeedsGradients =
    "its majority vote returns signs without magnitude, so the learning rate has to scale the vote after the "
    "exchange: use exchange = \"gradient\" (or ef_signsgd / onebit, which send a magnitude)";

struct SignSgdOptions {
  static OptionFields<SignSgdOptions> fields() { return {}; }
  static std::string why_not_update_exchange(const ComponentSpec&) { return kMajorityVoteNeedsGradients; }
};

/// signSGD with majority vote (Bernstein et al. 2018, "signSGD: Compressed Optimisation for
/// Non-Convex Problems"). Each worker sends the signs
/// of its gradient; decoding adds +1 or -1 per element (a zero gradient element is sent as +1,
/// one bit cannot say zero); aggregate() turns the sum of votes into its sign.
/// Payload, host byte order: uint32 n | ceil(n/8) bytes, bit i = element i is negative
/// (byte 4 + i/8, bit i%8, least significant first). Not summable: votes are gathered.
class SignSgdCompressor : public Compressor {
 public:
  explicit SignSgdCompressor(SignSgdOptions = {}) {}
  std::string name() const override { return "signsgd"; }
  Capabilities capabilities() const override {
    return {.summable = false, .separable_by_layer = true, .fixed_size = true};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Majority vote: sign(sum) per element, 0 stays 0 (a tie).
  void aggregate(std::span<float> sum, int workers) const override;
};

struct SignumOptions {
  double momentum = 0.9;

  static OptionFields<SignumOptions> fields();
  static std::string why_not_update_exchange(const ComponentSpec&) { return kMajorityVoteNeedsGradients; }
};

/// Signum, signSGD with momentum (Bernstein et al. 2018). The worker keeps
/// m = momentum * m + (1 - momentum) * g (m starts at zero, float32 arithmetic) and sends
/// sign(m) in the signsgd wire format; aggregate() is the same majority vote.
class SignumCompressor : public Compressor {
 public:
  explicit SignumCompressor(SignumOptions options);
  std::string name() const override { return "signum"; }
  void save_state(StateWriter& out) const override { out.array(momentum_); }
  void load_state(StateReader& in) override { in.array(momentum_); }
  Capabilities capabilities() const override {
    return {.summable = false, .separable_by_layer = true, .fixed_size = true};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Majority vote: sign(sum) per element, 0 stays 0 (a tie).
  void aggregate(std::span<float> sum, int workers) const override;
  /// The momentum buffer after the last compress() (empty before the first).
  std::span<const float> momentum() const { return momentum_; }

 private:
  float beta_;
  float one_minus_beta_;
  std::vector<float> momentum_;
};

struct EfSignSgdOptions {
  bool error_feedback = true;

  static OptionFields<EfSignSgdOptions> fields();
};

/// Scaled sign without state: sends (||p||_1 / n) * sign(p) for an input p of n elements.
/// Payload, host byte order: uint32 n | float32 scale | ceil(n/8) bytes of sign bits (bit i =
/// element i is negative, byte 8 + i/8, bit i%8). Decoding adds +scale or -scale.
class ScaledSignCodec : public Compressor {
 public:
  std::string name() const override { return "ef_signsgd"; }
  Capabilities capabilities() const override { return {.summable = false}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  /// Error feedback's compress of residual + gradient, adding the gradient into the residual in
  /// the same pass (see ErrorFeedback::compress).
  void compress_corrected(std::span<const float> gradient, std::span<float> residual, Payload& payload);
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  /// Error feedback's residual -= the decoded payload in one pass (see ErrorFeedback::compress).
  void subtract_decoded(const Payload& payload, std::span<float> residual) const;
};

/// EF-signSGD (Karimireddy et al. 2019, "Error Feedback Fixes SignSGD and other Gradient
/// Compression Schemes"): p = g + e, send (||p||_1 / n) * sign(p), keep e = p - sent.
/// Wire format of ScaledSignCodec; aggregate() is the mean.
class EfSignSgdCompressor : public WithErrorFeedback<ScaledSignCodec> {
 public:
  explicit EfSignSgdCompressor(EfSignSgdOptions options) : WithErrorFeedback(options.error_feedback) {}
};

}  // namespace laconic::compress
