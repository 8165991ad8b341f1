#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct Vgg11Options {
  double width = 1.0;
  std::int64_t classes = 10;
  std::int64_t in_channels = 3;

  static OptionFields<Vgg11Options> fields();
};

/// VGG-11 (Simonyan & Zisserman 2015, configuration A) for CIFAR-sized images, in the form
/// common in CIFAR work: eight 3x3 convolutions (64, M, 128, M, 256, 256, M, 512, 512, M, 512,
/// 512, M; M = 2x2 max pooling), each followed by batch norm and ReLU, then global average
/// pooling and one linear layer. 9,231,114 parameters at width 1 for 10 classes. Inputs
/// [N, in_channels, H, W] with H, W >= 32. Batch-norm running statistics are buffers, not
/// parameters: each worker keeps its own and rank 0 evaluates with its own.
class Vgg11 : public Model {
 public:
  explicit Vgg11(Vgg11Options options);
  std::string name() const override { return "vgg11"; }
  torch::Tensor forward(torch::Tensor inputs) override;
  std::int64_t outputs() const override { return options_.classes; }
  void check_input(const std::vector<std::int64_t>& shape) const override;

 private:
  Vgg11Options options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};

}  // namespace laconic::train
