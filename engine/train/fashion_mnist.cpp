#include "engine/train/fashion_mnist.hpp"

#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/train/idx_reader.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training images scaled to [0, 1].
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

// Debian ships the files gzipped; a user's own copy may be unpacked.
std::string find_file(const std::string& root, const std::string& base) {
  for (const std::string& name : {base + ".gz", base})
    if (std::filesystem::exists(root + "/" + name)) return root + "/" + name;
  throw ConfigError(str_cat(
      "Fashion-MNIST file '", base, "' not found in '", root,
      "': install the Debian package dataset-fashion-mnist (apt-get install "
      "dataset-fashion-mnist), or point fashion_mnist { root = ... } at a directory holding ",
      base, "[.gz]"));
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
  auto images = read_idx_images(find_file(options_.root, prefix + "-images-idx3-ubyte"));
  auto labels = read_idx_labels(find_file(options_.root, prefix + "-labels-idx1-ubyte"));
  if (images.size(0) != labels.size(0))
    throw ConfigError(str_cat("Fashion-MNIST ", prefix, ": ", images.size(0), " images but ",
                              labels.size(0), " labels"));
  auto inputs = images.to(torch::kFloat32).div_(255.0f).sub_(kMean).div_(kStd).unsqueeze(1);
  return DataSplit{inputs.contiguous(), labels};
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
