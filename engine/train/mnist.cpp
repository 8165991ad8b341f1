#include "engine/train/mnist.hpp"

#include "engine/core/error.hpp"
#include "engine/train/idx_reader.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training digits scaled to [0, 1].
constexpr float kMean = 0.1307f;
constexpr float kStd = 0.3081f;

std::string find_file(const std::string& root, const std::string& base) {
  return find_idx_file(
      root, base, "MNIST",
      str_cat("no Debian package ships MNIST: download train-images-idx3-ubyte.gz, "
              "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and "
              "t10k-labels-idx1-ubyte.gz from Yann LeCun's MNIST page "
              "(yann.lecun.com/exdb/mnist) into one directory and point mnist { root = ... } at "
              "it"));
}

}  // namespace

std::vector<FieldSpec> MnistOptions::fields() {
  return {{"root", FieldType::String, std::string(kMnistRoot),
           "directory holding the four MNIST idx files (.gz or plain)"}};
}

MnistOptions MnistOptions::from(const ComponentSpec& spec) {
  MnistOptions o;
  o.root = spec.text("root");
  if (o.root.empty()) throw ConfigError("mnist.root must not be empty");
  // Checked when the experiment is loaded, so missing files stop the run before any worker.
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    find_file(o.root, base);
  return o;
}

DataSplit MnistDataset::load(const std::string& prefix) const {
  return read_idx_split(find_file(options_.root, prefix + "-images-idx3-ubyte"),
                        find_file(options_.root, prefix + "-labels-idx1-ubyte"), kMean, kStd,
                        "MNIST");
}

const DataSplit& MnistDataset::train() {
  if (!train_) train_ = load("train");
  return *train_;
}

const DataSplit& MnistDataset::test() {
  if (!test_) test_ = load("t10k");
  return *test_;
}

}  // namespace laconic::train
