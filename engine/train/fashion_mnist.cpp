#include "engine/train/fashion_mnist.hpp"

#include "engine/core/error.hpp"
#include "engine/train/idx_reader.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training images scaled to [0, 1].
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

std::string find_file(const std::string& root, const std::string& base) {
  return find_idx_file(
      root, base, "Fashion-MNIST",
      str_cat("install the Debian package dataset-fashion-mnist (apt-get install "
              "dataset-fashion-mnist), or point fashion_mnist { root = ... } at a directory "
              "holding ", base, "[.gz]"));
}

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
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    find_file(o.root, base);
  return o;
}

DataSplit FashionMnistDataset::load(const std::string& prefix) const {
  return read_idx_split(find_file(options_.root, prefix + "-images-idx3-ubyte"),
                        find_file(options_.root, prefix + "-labels-idx1-ubyte"), kMean, kStd,
                        "Fashion-MNIST");
}

const DataSplit& FashionMnistDataset::train() {
  if (!train_) train_ = load("train");
  return *train_;
}

const DataSplit& FashionMnistDataset::test() {
  if (!test_) test_ = load("t10k");
  return *test_;
}

}  // namespace laconic::train
