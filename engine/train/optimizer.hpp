#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

/// Updates parameters from their .grad(), which the worker has already averaged over workers.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  /// Applies one update to `params` (same list, same order, every call).
  virtual void step(std::vector<torch::Tensor>& params) = 0;
};

}  // namespace laconic::train
