#pragma once
#include <string>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/core/registry.hpp"

namespace laconic::compress {

/// Every built-in compressor, one registration line each (engine/compress/builtin.cpp). Each
/// also accepts the common fields `scope` ("global" | "layer") and `min_size` (elements).
Registry<Compressor> builtin_compressors();

/// Builds the compressor of `spec` for a gradient made of layers of `shapes`, in order,
/// honouring `scope` and `min_size` (see scoped.hpp); without either, the plain compressor.
/// It comes complete, as Gloo's algorithms do: told the shapes and seeded with `seed` before
/// anything else can reach it; the engine builds every compressor it trains with here. A
/// compressor that exchanges itself (powersgd) takes neither field.
std::unique_ptr<Compressor> build_compressor(const Registry<Compressor>& registry, const ComponentSpec& spec,
                                             const std::vector<LayerShape>& shapes, CompressorSeed seed);

/// The registered compressors that work element- or layer-wise with their default fields (their
/// capabilities' separable_by_layer, asked of each built on one layer), sorted by name: what
/// allreduce { overlap = true } runs besides any compressor with scope = "layer".
std::vector<std::string> layer_separable_compressors(const Registry<Compressor>& registry);

}  // namespace laconic::compress
