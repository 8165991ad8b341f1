#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/error_feedback.hpp"
#include "engine/compress/huffman.hpp"
#include "engine/compress/private_stream_codec.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct AdaptiveOptions {
  double sample_fraction = 0.03;
  std::int64_t probe_bits = 4;
  std::int64_t floor_bits = 6;
  bool huffman = true;
  bool error_feedback = false;

  static OptionFields<AdaptiveOptions> fields();
};

/// Bytes of the fixed adaptive header: uint32 n, float32 min, float32 max, uint8 bits,
/// uint8 coding.
inline constexpr std::size_t kAdaptiveHeaderBytes = 14;

/// The most bits per element the adaptive quantizer uses (bin indices are 16-bit symbols).
inline constexpr unsigned kAdaptiveMaxBits = 16;

/// The parts of one adaptive payload (with Huffman its size is no closed formula of n).
struct AdaptivePayloadParts {
  std::size_t header_bytes = kAdaptiveHeaderBytes;  ///< bytes, always kAdaptiveHeaderBytes
  std::size_t codebook_bytes = 0;                   ///< bytes of the Huffman codebook (0: fixed)
  std::uint64_t code_bits = 0;                      ///< bits of the bin indices, before padding
};

/// Bytes of a payload with these parts: header + codebook + ceil(code_bits / 8).
std::size_t adaptive_payload_bytes(const AdaptivePayloadParts& parts);

/// Elements sampled for the entropy estimate of n elements: ceil(fraction * n) clamped to
/// [1, n] (0 for n = 0).
std::size_t adaptive_sample_size(double fraction, std::size_t n);

/// The bit-selection rule: N = floor_bits + ceil(H), at most kAdaptiveMaxBits, for an entropy
/// estimate H in bits (an H within 1e-9 of an integer counts as that integer).
unsigned adaptive_bits(double entropy_bits, unsigned floor_bits);

/// The adaptive quantizer without error feedback (stateful only in its sampling Rng).
///
/// Per compress() call (one layer under layer scope, else the whole gradient), after Øland &
/// Raj 2015, Algorithms 1 and 2:
///  1. min and max of the n elements (a NaN anywhere makes both NaN);
///  2. a random subset of s = adaptive_sample_size(sample_fraction, n) elements, one from each
///     of s strata: element start_j + rng.below(end_j - start_j) of [start_j, end_j) =
///     [j n / s, (j + 1) n / s) (integer division), j = 0..s-1 in order — always s draws,
///     whatever the values. Stratified rather than simple random sampling: no repetition, no
///     scratch, memory read front to back (uniform random reads over a 4M-element gradient
///     were a third of compress() time), and for equal strata a variance of the estimate no
///     larger than with replacement. The sample is
///     quantized with probe_bits bits over [min, max] (the rule of 4.), and H = -sum p log2 p
///     of its 2^probe_bits-bin histogram, in bits;
///  3. N = adaptive_bits(H, floor_bits) = floor_bits + ceil(H), capped at 16. The paper writes
///     N = H + c with c the floor and leaves rounding open; rounding up keeps N >= H + c. With
///     the paper's M = 4, c = 6, N lies in [6, 10], and its ceiling of 10 bits is M + c;
///  4. x goes to bin i = floor((x - min) * 2^N / (max - min)) clamped to [0, 2^N - 1] and
///     decodes to the bin centre min + (i + 0.5) (max - min) / 2^N — the rule of uniform {bits},
///     measured from min (the paper's Quantize measures from max, but its decoder adds to
///     w_min; measuring from min makes the two agree). Constant input (max == min) decodes
///     exactly; a NaN or an infinite range sends bin 0 everywhere and decodes non-finite;
///  5. with huffman = true the bin indices are Huffman-coded (HuffmanCode: codebook in the
///     payload) unless fixed-width packing is strictly smaller (few elements for 2^N bins, e.g.
///     3000 Gaussian elements at 10 bits, where the codebook outweighs the gain); with
///     huffman = false they are always packed. A constant layer costs a 5-byte codebook and no
///     code bits.
///
/// Wire layout (little-endian):
///   uint32 n | float32 min | float32 max | uint8 N | uint8 coding | body
///     coding 0 (fixed):   n indices of N bits, LSB-first, zero-padded: ceil(n N / 8) bytes
///     coding 1 (huffman): HuffmanCode codebook over 2^N symbols | the n codes, zero-padded
/// Its size is adaptive_payload_bytes(last_parts()).
class AdaptiveCodec : public PrivateStreamCodec<Rng> {
 public:
  explicit AdaptiveCodec(const AdaptiveOptions& options);
  std::string name() const override { return "adaptive"; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  // Private sampling randomness: streams::kAdaptiveSample.

  /// Bits per element the last compress() chose (0 before the first).
  unsigned last_bits() const { return last_bits_; }
  /// Entropy estimate of the last compress(), in bits per element at probe_bits.
  double last_entropy() const { return last_entropy_; }
  /// The parts of the last payload.
  const AdaptivePayloadParts& last_parts() const { return last_parts_; }

 private:
  AdaptiveOptions options_;
  unsigned last_bits_ = 0;
  double last_entropy_ = 0.0;
  AdaptivePayloadParts last_parts_;
  // Scratch reused across steps.
  std::vector<std::uint64_t> probe_counts_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint16_t> indices_;
  HuffmanCode encoder_;
  // Decoding scratch in a const method: compressors are single-threaded (compressor.hpp), and
  // keeping it avoids rebuilding tables and buffers on every payload of every worker.
  mutable HuffmanCode decoder_;
  mutable std::vector<std::uint16_t> decoded_;
};

/// Entropy-adaptive N-bit min-max quantization with Huffman coding (Øland & Raj 2015,
/// "Reducing communication overhead in distributed learning by an order of magnitude
/// (almost)", Algorithms 1 and 2).
class AdaptiveCompressor : public WithErrorFeedback<AdaptiveCodec> {
 public:
  explicit AdaptiveCompressor(AdaptiveOptions options) : WithErrorFeedback(options.error_feedback, options) {}
  unsigned last_bits() const { return codec().last_bits(); }
  double last_entropy() const { return codec().last_entropy(); }
  const AdaptivePayloadParts& last_parts() const { return codec().last_parts(); }
};

}  // namespace laconic::compress
