#include "engine/compress/compressor_group.hpp"

#include "engine/core/error.hpp"

namespace laconic::compress {

void CompressorGroup::compress(std::span<const float>, Payload&) {
  throw InvariantError("a group of compressors compresses member by member, never as one");
}

void CompressorGroup::decompress_add(const Payload&, std::span<float>) const {
  throw InvariantError("a group of compressors decodes member by member, never as one");
}

}  // namespace laconic::compress
