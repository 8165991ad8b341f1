#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct ResnetOptions {
  std::int64_t depth = 18;
  std::int64_t classes = 10;
  std::int64_t in_channels = 3;

  static OptionFields<ResnetOptions> fields();
};

/// Residual networks of basic blocks (He et al. 2016) for 32x32 images, the two used in the
/// communication-efficiency literature:
///  - depth 18: ImageNet ResNet-18 adapted to CIFAR: a 3x3 stride-1 stem of 64 channels and no
///    max pooling, then 2+2+2+2 blocks of 64/128/256/512 channels, 1x1 convolution shortcuts
///    where the shape changes; 11,173,962 parameters for 10 classes.
///  - depth 20: He et al.'s CIFAR ResNet-20: a 16-channel stem, then 3+3+3 blocks of
///    16/32/64 channels, parameter-free shortcuts (option A: stride-2 subsampling and zero
///    channels); 269,722 parameters for 10 classes.
/// Every convolution is followed by batch norm; global average pooling and one linear layer end
/// both. Inputs [N, in_channels, H, W] with H, W >= 8.
class Resnet : public Model {
 public:
  explicit Resnet(ResnetOptions options);
  std::string name() const override { return "resnet"; }
  torch::Tensor forward(torch::Tensor inputs) override;
  std::int64_t outputs() const override { return options_.classes; }
  void check_input(const std::vector<std::int64_t>& shape) const override;

 private:
  ResnetOptions options_;
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_norm_{nullptr};
  torch::nn::Sequential blocks_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};

}  // namespace laconic::train
