#pragma once
// How a collective carries floats in a narrower format than fp32 (fp16, bf16): the chunks it
// sends are encoded, and what it receives is decoded, summed in fp32 and rounded back into the
// format before it goes on (Communicator::allreduce_sum_encoded).
#include <cstddef>
#include <cstdint>
#include <span>

namespace laconic::comm {

class WireCodec {
 public:
  virtual ~WireCodec() = default;
  /// Bytes of `n` encoded elements.
  virtual std::size_t bytes(std::size_t n) const = 0;
  /// Encodes in[i] into out (bytes(in.size()) bytes), rounding to the format.
  virtual void encode(std::span<const float> in, std::span<std::uint8_t> out) const = 0;
  /// Decodes `in` (bytes(out.size()) bytes) into out, overwriting it.
  virtual void decode(std::span<const std::uint8_t> in, std::span<float> out) const = 0;
  /// Rounds `values` to the format in place (encode, then decode), through `scratch`.
  void round(std::span<float> values, std::span<std::uint8_t> scratch) const;
};

}  // namespace laconic::comm
