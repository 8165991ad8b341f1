#pragma once
// DiLoCo's outer step on flat weights: the schedule's half that touches tensors
// (engine/schedule/diloco.hpp says when it runs).
#include <span>
#include <vector>

#include <torch/types.h>

#include "engine/train/optim/optimizer.hpp"

namespace laconic::train {

/// Steps `shared` (the weights every worker started the round from, flat, in the order and
/// shapes of `layout`) with `outer`, whose gradient is DiLoCo's pseudo-gradient: the round's
/// start minus the workers' mean local weights, that is minus `mean_change` (their mean of
/// local minus start). `mean_change` becomes the pseudo-gradient. The optimizer sees one tensor
/// per layer of `layout`, so a per-layer rule (LAMB's trust ratio) acts per layer.
void outer_step(Optimizer& outer, std::span<float> shared, std::span<float> mean_change,
                const std::vector<torch::Tensor>& layout);

/// Streaming DiLoCo's fragments: the layers (their element counts, in order) cut into
/// `fragments` runs of consecutive layers of about equal size (each cut at the layer boundary
/// nearest its share of the elements), as fragments + 1 layer indices
/// (fragment f is layers [bounds[f], bounds[f + 1])). Each fragment holds at least one layer;
/// ConfigError when there are fewer layers than fragments.
std::vector<std::size_t> fragment_bounds(const std::vector<std::int64_t>& layer_sizes, std::int64_t fragments);

}  // namespace laconic::train
