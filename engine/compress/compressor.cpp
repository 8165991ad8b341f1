#include "engine/compress/compressor.hpp"

#include "engine/core/error.hpp"

namespace laconic::compress {

void MultiRoundCompressor::compress(std::span<const float>, Payload&) {
  throw InvariantError(str_cat(name(), " exchanges itself (several collectives per step); call exchange()"));
}

void MultiRoundCompressor::decompress_add(const Payload&, std::span<float>) const {
  throw InvariantError(str_cat(name(), " exchanges itself (several collectives per step); call exchange()"));
}

std::string transit_format_name(TransitFormat format) {
  switch (format) {
    case TransitFormat::Fp16:
      return "fp16";
    case TransitFormat::Bf16:
      return "bf16";
    case TransitFormat::Int8:
      return "int8";
    case TransitFormat::Int4:
      return "int4";
    default:
      return "";
  }
}

}  // namespace laconic::compress
