#include "engine/train/data/fashion_mnist.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training images scaled to [0, 1].
constexpr float kFashionMean = 0.2860f;
constexpr float kFashionStd = 0.3530f;

std::string fashion_hint(const std::string& base) {
  return str_cat(
      "install the Debian package dataset-fashion-mnist (apt-get install "
      "dataset-fashion-mnist), or point fashion_mnist { root = ... } at a directory "
      "holding ",
      base, "[.gz]");
}

const IdxDatasetInfo kFashionInfo{"fashion_mnist", "Fashion-MNIST", kFashionMean, kFashionStd, fashion_hint};

}  // namespace

OptionFields<FashionMnistOptions> FashionMnistOptions::fields() {
  return OptionFields<FashionMnistOptions>()
      .text("root", &FashionMnistOptions::root, "directory holding the idx files (from Debian's dataset-fashion-mnist)")
      .rule([](const ComponentSpec& spec, FashionMnistOptions& o) {
        if (o.root.empty()) throw ConfigError(str_cat(spec.name, ".root must not be empty"));
      });
}

FashionMnistDataset::FashionMnistDataset(FashionMnistOptions options)
    : IdxImageDataset(std::move(options.root), kFashionInfo) {}

}  // namespace laconic::train
