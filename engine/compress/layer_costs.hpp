#pragma once
// A compressor's cost on each layer of a model, measured on this host (engine/core/layer_costs.hpp):
// the compressor built for that layer alone, fed a Gaussian gradient of the layer's size, timed
// as it compresses and decodes, beside `none` (the layer as fp32) timed alike.
#include <optional>
#include <vector>

#include "engine/compress/compressor.hpp"
#include "engine/core/component.hpp"
#include "engine/core/layer_costs.hpp"
#include "engine/core/registry.hpp"

namespace laconic::compress {

/// How long each measurement may take: the codec is repeated until `seconds` of it have run (at
/// least 3 times, at most `max_repeats`), and its medians are kept.
struct LayerTiming {
  double seconds = 0.01;
  int max_repeats = 200;
};

/// `spec` measured on every layer of `shapes`; nothing for a compressor that exchanges itself
/// (PowerSGD: its costs are not a payload's) or one that sends the gradient as it is (none).
std::optional<LayerCodecCosts> measure_layer_costs(const Registry<Compressor>& registry, const ComponentSpec& spec,
                                                   const std::vector<LayerShape>& shapes, LayerTiming timing = {});

}  // namespace laconic::compress
