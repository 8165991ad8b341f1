#pragma once
#include <string>

#include <torch/torch.h>

namespace laconic::train {

/// A trainable network. Parameters are registered the usual LibTorch way.
class Model : public torch::nn::Module {
 public:
  virtual std::string name() const = 0;
  /// Logits [N, classes] for inputs [N, ...].
  virtual torch::Tensor forward(torch::Tensor inputs) = 0;
};

}  // namespace laconic::train
