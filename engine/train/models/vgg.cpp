#include "engine/train/models/vgg.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

constexpr std::int64_t kPool = 0;  // a 2x2 max pooling in the layer list
constexpr std::int64_t kVgg11Layers[] = {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};

std::int64_t scaled(std::int64_t channels, double width) {
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(channels) * width));
}

}  // namespace

OptionFields<Vgg11Options> Vgg11Options::fields() {
  using O = Vgg11Options;
  return OptionFields<O>()
      .number("width", &O::width, "multiplies every channel count", open_closed(0, 16))
      .integer("classes", &O::classes, "number of output classes", at_least(2))
      .integer("in_channels", &O::in_channels, "channels of the input images", at_least(1));
}

Vgg11::Vgg11(Vgg11Options options) : options_(options) {
  namespace nn = torch::nn;
  nn::Sequential features;
  std::int64_t channels = options_.in_channels;
  for (const std::int64_t layer : kVgg11Layers) {
    if (layer == kPool) {
      features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
      continue;
    }
    const std::int64_t out = scaled(layer, options_.width);
    features->push_back(nn::Conv2d(nn::Conv2dOptions(channels, out, 3).padding(1).bias(false)));
    features->push_back(nn::BatchNorm2d(out));
    features->push_back(nn::ReLU(nn::ReLUOptions().inplace(true)));
    channels = out;
  }
  features_ = register_module("features", features);
  classifier_ = register_module("classifier", nn::Linear(channels, options_.classes));
}

torch::Tensor Vgg11::forward(torch::Tensor x) {
  x = features_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return classifier_->forward(x);
}

void Vgg11::check_input(const std::vector<std::int64_t>& shape) const {
  if (shape.empty()) return;
  if (shape.size() != 3 || shape[0] != options_.in_channels || shape[1] < 32 || shape[2] < 32)
    throw ConfigError(str_cat("vgg11 takes images of in_channels = ", options_.in_channels,
                              " channels, at least 32x32 (five 2x2 poolings)"));
}

}  // namespace laconic::train
