#pragma once
// How a collective carries floats in a narrower format than fp32 (fp16, bf16, int8 and int4 with
// a scale per chunk): the chunks it sends are encoded, and what it receives is decoded, summed in
// fp32 and rounded back into the format before it goes on (Communicator::allreduce_sum_encoded).
// A compressor whose payloads are summed so says which codec (Compressor::transit_codec); the
// communicator runs it. Here, below both, so that neither includes the other.
#include <cstddef>
#include <cstdint>
#include <span>

namespace laconic {

class WireCodec {
 public:
  virtual ~WireCodec() = default;
  /// Bytes of `n` encoded elements.
  virtual std::size_t bytes(std::size_t n) const = 0;
  /// Encodes in[i] into out (bytes(in.size()) bytes), rounding to the format. A codec that rounds
  /// stochastically draws from its own stream here: one caller at a time.
  virtual void encode(std::span<const float> in, std::span<std::uint8_t> out) const = 0;
  /// Decodes `in` (bytes(out.size()) bytes) into out, overwriting it.
  virtual void decode(std::span<const std::uint8_t> in, std::span<float> out) const = 0;
  /// Encoding values already decoded from the format gives the same bytes again (fp16, bf16), so
  /// that a collective may encode a rounded partial sum a second time (halving-doubling, one-shot)
  /// and every rank still ends with the same bits. False for a scale per chunk with stochastic
  /// rounding: such a codec is run by the ring only, which encodes each partial sum once.
  virtual bool idempotent() const { return true; }
  /// Rounds `values` to the format in place (encode, then decode), through `scratch`.
  void round(std::span<float> values, std::span<std::uint8_t> scratch) const {
    const std::span<std::uint8_t> encoded = scratch.first(bytes(values.size()));
    encode(values, encoded);
    decode(encoded, values);
  }
};

}  // namespace laconic
