#pragma once
#include "engine/compress/compressor.hpp"
#include "engine/core/registry.hpp"

namespace laconic::compress {

/// Every built-in compressor, one registration line each (engine/compress/builtin.cpp). Each
/// also accepts the common fields `scope` ("global" | "layer") and `min_size` (elements).
Registry<Compressor> builtin_compressors();

/// Builds the compressor of `spec` for a gradient made of layers of `layer_sizes` elements,
/// honouring `scope` and `min_size` (see scoped.hpp); without either, the plain compressor.
std::unique_ptr<Compressor> build_compressor(const Registry<Compressor>& registry,
                                             const ComponentSpec& spec,
                                             const std::vector<std::size_t>& layer_sizes);

}  // namespace laconic::compress
