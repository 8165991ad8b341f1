#include "engine/train/models/resnet.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

/// How a block's shortcut matches a change of shape (stride 2, more channels).
enum class Shortcut { Projection, ZeroPad };

/// Two 3x3 convolutions with batch norm, and the input added back before the last ReLU.
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride, Shortcut shortcut)
      : stride_(stride), pad_channels_(out - in) {
    conv1_ = register_module("conv1", conv3x3(in, out, stride));
    norm1_ = register_module("norm1", nn::BatchNorm2d(out));
    conv2_ = register_module("conv2", conv3x3(out, out, 1));
    norm2_ = register_module("norm2", nn::BatchNorm2d(out));
    reshapes_ = stride != 1 || in != out;
    if (reshapes_ && shortcut == Shortcut::Projection) {
      project_ = register_module("project", nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
      project_norm_ = register_module("project_norm", nn::BatchNorm2d(out));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(norm1_->forward(conv1_->forward(x)));
    y = norm2_->forward(conv2_->forward(y));
    return torch::relu(y + shortcut(x));
  }

 private:
  torch::Tensor shortcut(const torch::Tensor& x) {
    if (!reshapes_) return x;
    if (!project_.is_empty()) return project_norm_->forward(project_->forward(x));
    // Option A of He et al.: keep every stride-th pixel, append zero channels.
    using torch::indexing::None;
    using torch::indexing::Slice;
    auto sub = x.index({Slice(), Slice(), Slice(None, None, stride_), Slice(None, None, stride_)});
    return torch::constant_pad_nd(sub, {0, 0, 0, 0, 0, pad_channels_});
  }

  std::int64_t stride_;
  std::int64_t pad_channels_;
  bool reshapes_ = false;
  nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, project_{nullptr};
  nn::BatchNorm2d norm1_{nullptr}, norm2_{nullptr}, project_norm_{nullptr};
};
TORCH_MODULE(BasicBlock);

struct Stage {
  std::int64_t channels;
  std::int64_t blocks;
  std::int64_t stride;
};

}  // namespace

OptionFields<ResnetOptions> ResnetOptions::fields() {
  using O = ResnetOptions;
  return OptionFields<O>()
      .integer("depth", &O::depth, "18 (ResNet-18 for 32x32 images) or 20 (He et al.'s CIFAR ResNet-20)")
      .integer("classes", &O::classes, "number of output classes", at_least(2))
      .integer("in_channels", &O::in_channels, "channels of the input images", at_least(1))
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.depth != 18 && o.depth != 20) throw out_of_range(spec, "depth", "18 or 20", str_cat(o.depth));
      });
}

Resnet::Resnet(ResnetOptions options) : options_(options) {
  const bool cifar = options_.depth == 20;
  const std::vector<Stage> stages = cifar ? std::vector<Stage>{{16, 3, 1}, {32, 3, 2}, {64, 3, 2}}
                                          : std::vector<Stage>{{64, 2, 1}, {128, 2, 2}, {256, 2, 2}, {512, 2, 2}};
  const Shortcut shortcut = cifar ? Shortcut::ZeroPad : Shortcut::Projection;
  std::int64_t channels = stages.front().channels;
  stem_ = register_module("stem", conv3x3(options_.in_channels, channels, 1));
  stem_norm_ = register_module("stem_norm", nn::BatchNorm2d(channels));
  nn::Sequential blocks;
  for (const Stage& stage : stages)
    for (std::int64_t b = 0; b < stage.blocks; ++b) {
      blocks->push_back(BasicBlock(channels, stage.channels, b == 0 ? stage.stride : 1, shortcut));
      channels = stage.channels;
    }
  blocks_ = register_module("blocks", blocks);
  classifier_ = register_module("classifier", nn::Linear(channels, options_.classes));
}

torch::Tensor Resnet::forward(torch::Tensor x) {
  x = torch::relu(stem_norm_->forward(stem_->forward(x)));
  x = blocks_->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return classifier_->forward(x);
}

void Resnet::check_input(const std::vector<std::int64_t>& shape) const {
  if (shape.empty()) return;
  if (shape.size() != 3 || shape[0] != options_.in_channels || shape[1] < 8 || shape[2] < 8)
    throw ConfigError(
        str_cat("resnet takes images of in_channels = ", options_.in_channels, " channels, at least 8x8"));
}

}  // namespace laconic::train
