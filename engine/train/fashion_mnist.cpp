#include "engine/train/fashion_mnist.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training images scaled to [0, 1].
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

std::string hint(const std::string& base) {
  return str_cat(
      "install the Debian package dataset-fashion-mnist (apt-get install "
      "dataset-fashion-mnist), or point fashion_mnist { root = ... } at a directory "
      "holding ",
      base, "[.gz]");
}

const IdxDatasetInfo kInfo{"fashion_mnist", "Fashion-MNIST", kMean, kStd, hint};

}  // namespace

std::vector<FieldSpec> FashionMnistOptions::fields() {
  return {{"root", FieldType::String, std::string(kFashionMnistRoot),
           "directory holding the idx files (from Debian's dataset-fashion-mnist)"}};
}

FashionMnistOptions FashionMnistOptions::from(const ComponentSpec& spec) {
  FashionMnistOptions o;
  o.root = spec.text("root");
  if (o.root.empty()) throw ConfigError("fashion_mnist.root must not be empty");
  // Checked here, when the experiment is loaded, so a missing package stops the run before any
  // worker starts.
  IdxImageDataset::check_files(o.root, kInfo);
  return o;
}

FashionMnistDataset::FashionMnistDataset(FashionMnistOptions options)
    : IdxImageDataset(std::move(options.root), kInfo) {}

}  // namespace laconic::train
