#include "engine/train/optim/outer_step.hpp"

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

}  // namespace laconic::train
