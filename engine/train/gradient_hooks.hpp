#pragma once
// Tells who needs to know when backward has finished a parameter's gradient: a post hook on the
// parameter's gradient accumulator (the node that adds the new gradient into .grad()), the
// place PyTorch DDP hooks its reducer into.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

class GradientReadyHooks {
 public:
  /// After each backward pass, `ready(i)` is called once .grad() of `params[i]` holds the
  /// pass's whole gradient (on backward's thread, in the order backward reaches them).
  GradientReadyHooks(const std::vector<torch::Tensor>& params, std::function<void(std::size_t)> ready);
  /// Removes the hooks.
  ~GradientReadyHooks();
  GradientReadyHooks(const GradientReadyHooks&) = delete;
  GradientReadyHooks& operator=(const GradientReadyHooks&) = delete;

 private:
  std::function<void(std::size_t)> ready_;
  // The accumulators are held: a parameter keeps only a weak reference to its own.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<std::uintptr_t> keys_;
};

}  // namespace laconic::train
