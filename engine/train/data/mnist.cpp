#include "engine/train/data/mnist.hpp"

#include "engine/core/error.hpp"

namespace laconic::train {
namespace {

// Mean and standard deviation of the training digits scaled to [0, 1].
constexpr float kMnistMean = 0.1307f;
constexpr float kMnistStd = 0.3081f;

std::string mnist_hint(const std::string&) {
  return "no Debian package ships MNIST: download train-images-idx3-ubyte.gz, "
         "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
         "from Yann LeCun's MNIST page (yann.lecun.com/exdb/mnist) into one directory and point "
         "mnist { root = ... } at it";
}

const IdxDatasetInfo kMnistInfo{"mnist", "MNIST", kMnistMean, kMnistStd, mnist_hint};

}  // namespace

OptionFields<MnistOptions> MnistOptions::fields() {
  return OptionFields<MnistOptions>()
      .text("root", &MnistOptions::root, "directory holding the four MNIST idx files (.gz or plain)")
      .rule([](const ComponentSpec& spec, MnistOptions& o) {
        if (o.root.empty()) throw ConfigError(str_cat(spec.name, ".root must not be empty"));
      });
}

MnistDataset::MnistDataset(MnistOptions options) : IdxImageDataset(std::move(options.root), kMnistInfo) {}

}  // namespace laconic::train
