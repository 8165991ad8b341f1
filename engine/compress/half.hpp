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

struct Fp16Options {
  static OptionFields<Fp16Options> fields() { return {}; }
};

struct Bf16Options {
  static OptionFields<Bf16Options> fields() { return {}; }
};

/// fp16 cast (IEEE 754 binary16, as in mixed-precision training, Micikevicius et al. 2018).
/// Payload, host byte order: uint32 n | n x uint16 binary16 bits (element i at byte 4 + 2i).
/// Not summable: summing in fp16 would round again, so payloads are gathered.
class Fp16Compressor : public Compressor {
 public:
  explicit Fp16Compressor(Fp16Options = {}) {}
  std::string name() const override { return "fp16"; }
  Capabilities capabilities() const override {
    return {.summable = false, .separable_by_layer = true, .fixed_size = true};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;

 private:
  bool hardware_ = fp16_hardware_available();
};

/// bfloat16 cast (Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training").
/// Payload, host byte order: uint32 n | n x uint16 bfloat16 bits (element i at byte 4 + 2i).
/// Not summable, like fp16.
class Bf16Compressor : public Compressor {
 public:
  explicit Bf16Compressor(Bf16Options = {}) {}
  std::string name() const override { return "bf16"; }
  Capabilities capabilities() const override {
    return {.summable = false, .separable_by_layer = true, .fixed_size = true};
  }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
};

}  // namespace laconic::compress
