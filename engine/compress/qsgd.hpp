#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/private_stream_codec.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

/// How the levels travel on the wire.
enum class QsgdCoding { Fixed, Elias };

struct QsgdOptions {
  std::int64_t levels = 16;
  std::int64_t bucket_size = 512;
  QsgdCoding coding = QsgdCoding::Fixed;
  bool error_feedback = false;

  static OptionFields<QsgdOptions> fields();
};

/// Bits per element with "fixed" coding: 1 sign bit + ceil(log2(levels + 1)) level bits.
unsigned qsgd_fixed_bits(unsigned levels);

/// Number of buckets for n elements: ceil(n / bucket_size).
std::size_t qsgd_buckets(std::size_t n, std::size_t bucket_size);

/// Bytes of a "fixed" QSGD payload for n elements: 4 (n) + 4 per bucket (norms) +
/// packed_bytes(n, qsgd_fixed_bits(levels)).
std::size_t qsgd_payload_bytes(std::size_t n, std::size_t bucket_size, unsigned levels);

/// Bytes of an "elias" QSGD payload whose elements got `element_levels`: 4 + 4 per bucket +
/// ceil(sum over elements of (elias_bits(l) + [l > 0]) / 8).
std::size_t qsgd_elias_payload_bytes(std::span<const std::uint32_t> element_levels, std::size_t bucket_size);

/// The float32 norm QSGD sends for one bucket: sqrt of the sum of squares in double, summed as
/// eight interleaved partial sums (element i into sum i mod 8, then ((0+4)+(1+5))+((2+6)+(3+7))).
float qsgd_bucket_norm(std::span<const float> bucket);

/// QSGD without error feedback. Wire layout (little-endian):
///   uint32 n | float32 norm[ceil(n / bucket_size)] | bit stream, LSB-first, zero-padded
/// where element i of bucket b has level l_i in [0, levels] and sign bit z_i (1 = negative) and
/// decodes to (z_i ? -1 : 1) * l_i * (norm_b / levels). The bit stream holds, per element,
///   "fixed": the value (l_i << 1) | z_i in qsgd_fixed_bits(levels) bits;
///   "elias": write_elias(l_i), then z_i as one bit only when l_i > 0.
/// A bucket whose norm is 0, inf or NaN (or below ~1e-34 * levels, where levels / norm
/// overflows) sends level 0 everywhere; the norm, which the receiver multiplies by, carries an
/// inf or NaN on as NaN.
class QsgdCodec : public PrivateStreamCodec<UniformStream> {
 public:
  /// `isa`: which compiled loops run (all give the same payloads); the CPU's best by default.
  QsgdCodec(unsigned levels, std::size_t bucket_size, QsgdCoding coding, Isa isa = best_isa());
  std::string name() const override { return "qsgd"; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  // Private stochastic rounding (streams::kQsgdRounding): each compress() draws n uniforms
  // rounded up to a whole UniformStream::kBlock, element i rounding up when its draw is below
  // its fraction.

 private:
  unsigned levels_;
  std::size_t bucket_size_;
  QsgdCoding coding_;
  Isa isa_;
};

/// QSGD: stochastic quantization of |x| / ||bucket||_2 to `levels` levels, unbiased, with
/// E||Q(v) - v||^2 <= min(n/s^2, sqrt(n)/s) ||v||^2 per bucket (Alistarh et al. 2017, "QSGD:
/// Communication-Efficient SGD via Gradient Quantization and Encoding").
class QsgdCompressor : public WithErrorFeedback<QsgdCodec> {
 public:
  explicit QsgdCompressor(QsgdOptions options);
};

}  // namespace laconic::compress
