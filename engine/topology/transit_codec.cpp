#include "engine/topology/transit_codec.hpp"

#include "engine/compress/half.hpp"

namespace laconic::topology {
namespace {

class Fp16WireCodec : public comm::WireCodec {
 public:
  std::size_t bytes(std::size_t n) const override { return 2 * n; }
  void encode(std::span<const float> in, std::span<std::uint8_t> out) const override {
    compress::fp16_encode(in, out.data(), hardware_);
  }
  void decode(std::span<const std::uint8_t> in, std::span<float> out) const override {
    compress::fp16_decode(in.data(), out, hardware_);
  }

 private:
  bool hardware_ = compress::fp16_hardware_available();
};

class Bf16WireCodec : public comm::WireCodec {
 public:
  std::size_t bytes(std::size_t n) const override { return 2 * n; }
  void encode(std::span<const float> in, std::span<std::uint8_t> out) const override {
    compress::bf16_encode(in, out.data());
  }
  void decode(std::span<const std::uint8_t> in, std::span<float> out) const override {
    compress::bf16_decode(in.data(), out);
  }
};

}  // namespace

const comm::WireCodec* transit_codec(compress::TransitFormat format) {
  static const Fp16WireCodec fp16;
  static const Bf16WireCodec bf16;
  switch (format) {
    case compress::TransitFormat::Fp16:
      return &fp16;
    case compress::TransitFormat::Bf16:
      return &bf16;
    default:
      return nullptr;
  }
}

}  // namespace laconic::topology
