#pragma once
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic::compress {

struct NoneOptions {
  static OptionFields<NoneOptions> fields() { return {}; }
};

/// No compression: the payload is the fp32 gradient itself (4 bytes per element).
class NoneCompressor : public Compressor {
 public:
  explicit NoneCompressor(NoneOptions) {}
  std::string name() const override { return "none"; }
  Capabilities capabilities() const override { return {.summable = true, .separable_by_layer = true, .lossless = true}; }
  void compress(std::span<const float> gradient, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
};

}  // namespace laconic::compress
