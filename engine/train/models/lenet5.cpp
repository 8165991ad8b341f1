#include "engine/train/models/lenet5.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<Lenet5Options> Lenet5Options::fields() {
  using O = Lenet5Options;
  return OptionFields<O>().integer("classes", &O::classes, "number of output classes", at_least(2));
}

Lenet5::Lenet5(Lenet5Options options) : classes_(options.classes) {
  namespace nn = torch::nn;
  conv1_ = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 6, 5).padding(2)));
  conv2_ = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)));
  fc1_ = register_module("fc1", nn::Linear(16 * 5 * 5, 120));
  fc2_ = register_module("fc2", nn::Linear(120, 84));
  fc3_ = register_module("fc3", nn::Linear(84, options.classes));
}

torch::Tensor Lenet5::forward(torch::Tensor x) {
  x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2);
  x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2);
  x = x.flatten(1);
  x = torch::relu(fc1_->forward(x));
  x = torch::relu(fc2_->forward(x));
  return fc3_->forward(x);
}

}  // namespace laconic::train

namespace laconic::train {

void Lenet5::check_input(const std::vector<std::int64_t>& shape) const {
  if (!shape.empty() && shape != std::vector<std::int64_t>{1, 28, 28})
    throw ConfigError("lenet5 takes 1x28x28 grey images");
}

}  // namespace laconic::train
