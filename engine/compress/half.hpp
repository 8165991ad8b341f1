#pragma once
// Half-precision casts: every float32 element goes out as 16 bits, either IEEE binary16 (fp16)
// or bfloat16 (the upper half of the float32). The conversions are plain bit manipulation, so
// they give the same bits on every platform; fp16 in bulk uses F16C where the CPU has it, which
// gives the same bits again.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

/// float32 -> IEEE binary16 bits, round to nearest even (subnormals included); values of
/// magnitude >= 65520 become infinity, NaN stays a (quiet) NaN with its sign.
std::uint16_t float_to_fp16(float value);

/// IEEE binary16 bits -> float32 (exact: every fp16 value is a float32).
float fp16_to_float(std::uint16_t bits);

/// float32 -> bfloat16 bits: the upper 16 bits, round to nearest even; NaN stays a quiet NaN.
std::uint16_t float_to_bf16(float value);

/// bfloat16 bits -> float32 (exact: the bits become the upper half, the lower half is zero).
float bf16_to_float(std::uint16_t bits);

/// True when this CPU has AVX2 and F16C, which the hardware paths of fp16_encode() and
/// fp16_decode_add() need.
bool fp16_hardware_available();

/// Writes float_to_fp16(in[i]) to out[2i, 2i + 2) (host byte order) for every i, eight at a time
/// with F16C's round-to-nearest-even conversion when `hardware` (only if
/// fp16_hardware_available()), else with float_to_fp16(); both give the same bits.
void fp16_encode(std::span<const float> in, std::uint8_t* out, bool hardware);

/// Adds fp16_to_float() of the binary16 values at in[2i, 2i + 2) to dense[i] for every i, with
/// F16C when `hardware` (only if fp16_hardware_available()); both give the same sums.
void fp16_decode_add(const std::uint8_t* in, std::span<float> dense, bool hardware);

/// Bytes of an fp16 or bf16 payload for n elements: a 4-byte header (n as uint32) and 2 bytes
/// per element.
std::size_t half_payload_bytes(std::size_t n);

/// Decodes binary16 values (in[2i, 2i + 2)) into out[i], overwriting it.
void fp16_decode(const std::uint8_t* in, std::span<float> out, bool hardware);

/// Writes float_to_bf16(in[i]) to out[2i, 2i + 2) and reads them back (overwriting out[i]).
void bf16_encode(std::span<const float> in, std::uint8_t* out);
void bf16_decode(const std::uint8_t* in, std::span<float> out);

/// The wire codecs of fp16 and bf16 summed in transit (two bytes an element, no header): they
/// hold no state, one instance each serves every caller.
const WireCodec& fp16_wire_codec();
const WireCodec& bf16_wire_codec();

/// The fields fp16 and bf16 share.
template <class Options>
OptionFields<Options> half_fields() {
  return OptionFields<Options>().flag(
      "gather", &Options::gather,
      "under allreduce, gather every worker's half-precision payload and sum them in fp32 (each worker "
      "receives p-1 payloads) instead of summing in half precision in the ring as PyTorch DDP's fp16 hook does "
      "(half of dense's bytes at any number of workers)");
}

struct Fp16Options {
  bool gather = false;  ///< gathered, not summed in the ring in half precision
  static OptionFields<Fp16Options> fields() { return half_fields<Fp16Options>(); }
};

struct Bf16Options {
  bool gather = false;  ///< gathered, not summed in the ring in half precision
  static OptionFields<Bf16Options> fields() { return half_fields<Bf16Options>(); }
};

/// fp16 cast (IEEE 754 binary16, as in mixed-precision training, Micikevicius et al. 2018).
/// Payload, host byte order: uint32 n | n x uint16 binary16 bits (element i at byte 4 + 2i).
/// Not summable as fp32 arrays; under allreduce summed in fp16 in the ring, every hop rounding
/// again (summed_in_transit, PyTorch DDP's fp16_compress_hook), or gathered with `gather`.
class Fp16Compressor : public Compressor {
 public:
  explicit Fp16Compressor(Fp16Options options = {}) : options_(options) {}
  std::string name() const override { return "fp16"; }
  Capabilities capabilities() const override {
    return {.summable = false,
            .separable_by_layer = true,
            .fixed_size = true,
            .summed_in_transit = options_.gather ? TransitFormat::None : TransitFormat::Fp16};
  }
  const WireCodec* transit_codec() const override { return options_.gather ? nullptr : &fp16_wire_codec(); }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  Fp16Options options_;
  bool hardware_ = fp16_hardware_available();
};

/// bfloat16 cast (Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training").
/// Payload, host byte order: uint32 n | n x uint16 bfloat16 bits (element i at byte 4 + 2i).
/// Exchanged like fp16: summed in bf16 in the ring under allreduce, or gathered with `gather`.
class Bf16Compressor : public Compressor {
 public:
  explicit Bf16Compressor(Bf16Options options = {}) : options_(options) {}
  std::string name() const override { return "bf16"; }
  Capabilities capabilities() const override {
    return {.summable = false,
            .separable_by_layer = true,
            .fixed_size = true,
            .summed_in_transit = options_.gather ? TransitFormat::None : TransitFormat::Bf16};
  }
  const WireCodec* transit_codec() const override { return options_.gather ? nullptr : &bf16_wire_codec(); }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  Bf16Options options_;
};

}  // namespace laconic::compress
