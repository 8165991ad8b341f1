#include "engine/train/optim/outer_step.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace laconic::train {

void outer_step(Optimizer& outer, std::span<float> shared, std::span<float> mean_change,
                const std::vector<torch::Tensor>& layout) {
  LACONIC_ENFORCE(shared.size() == mean_change.size(), "the shared weights have ", shared.size(),
                  " elements and the mean change ", mean_change.size());
  for (float& change : mean_change) change = -change;
  std::vector<torch::Tensor> layers;
  std::size_t offset = 0;
  for (const auto& p : layout) {
    LACONIC_ENFORCE(offset + static_cast<std::size_t>(p.numel()) <= shared.size(), "the layout has more elements (",
                    offset + static_cast<std::size_t>(p.numel()), ") than the shared weights (", shared.size(), ")");
    // Leaf tensors over the caller's memory: the optimizer steps `shared` in place.
    layers.push_back(torch::from_blob(shared.data() + offset, p.sizes(), torch::kFloat32));
    layers.back().mutable_grad() = torch::from_blob(mean_change.data() + offset, p.sizes(), torch::kFloat32);
    offset += static_cast<std::size_t>(p.numel());
  }
  LACONIC_ENFORCE(offset == shared.size(), "the layout has ", offset, " elements, the shared weights ", shared.size());
  outer.step(layers);
}

std::vector<std::size_t> fragment_bounds(const std::vector<std::int64_t>& layer_sizes, std::int64_t fragments) {
  const std::size_t layers = layer_sizes.size();
  if (fragments < 1 || static_cast<std::size_t>(fragments) > layers)
    throw ConfigError(str_cat("diloco.fragments = ", fragments, " cuts the model by layers, and it has ", layers,
                              " (parameter tensors); use at most that many"));
  const auto count = static_cast<std::size_t>(fragments);
  std::vector<double> before(layers + 1, 0.0);  // before[i]: elements in layers [0, i)
  for (std::size_t i = 0; i < layers; ++i) before[i + 1] = before[i] + static_cast<double>(layer_sizes[i]);
  std::vector<std::size_t> bounds(count + 1, 0);
  bounds[count] = layers;
  for (std::size_t k = 1; k < count; ++k) {
    // The layer boundary nearest k / F of the model, leaving at least one layer to every
    // fragment on either side.
    const double share = before[layers] * static_cast<double>(k) / static_cast<double>(count);
    auto cut = static_cast<std::size_t>(std::lower_bound(before.begin(), before.end(), share) - before.begin());
    if (cut > 0 && share - before[cut - 1] < before[cut] - share) --cut;
    bounds[k] = std::clamp(cut, bounds[k - 1] + 1, layers - (count - k));
  }
  return bounds;
}

}  // namespace laconic::train
