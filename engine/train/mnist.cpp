#include "engine/train/mnist.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training digits scaled to [0, 1].
constexpr float kMean = 0.1307f;
constexpr float kStd = 0.3081f;

std::string hint(const std::string&) {
  return "no Debian package ships MNIST: download train-images-idx3-ubyte.gz, "
         "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
         "from Yann LeCun's MNIST page (yann.lecun.com/exdb/mnist) into one directory and point "
         "mnist { root = ... } at it";
}

const IdxDatasetInfo kInfo{"mnist", "MNIST", kMean, kStd, hint};

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
  IdxImageDataset::check_files(o.root, kInfo);
  return o;
}

MnistDataset::MnistDataset(MnistOptions options) : IdxImageDataset(std::move(options.root), kInfo) {}

}  // namespace laconic::train
