#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct Lenet5Options {
  std::int64_t classes = 10;

  static OptionFields<Lenet5Options> fields();
};

/// LeNet-5 (LeCun et al. 1998) for 1x28x28 inputs, in its common modern form: ReLU and max
/// pooling; the first convolution pads by 2 so 28x28 inputs give the original 32x32 geometry.
/// 61,706 parameters for 10 classes.
class Lenet5 : public Model {
 public:
  explicit Lenet5(Lenet5Options options);
  std::string name() const override { return "lenet5"; }
  torch::Tensor forward(torch::Tensor inputs) override;
  std::int64_t outputs() const override { return classes_; }
  void check_input(const std::vector<std::int64_t>& shape) const override;

 private:
  std::int64_t classes_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};

}  // namespace laconic::train
