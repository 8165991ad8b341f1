#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/train/dataset.hpp"

namespace laconic::train {

/// Where mnist looks by default (no Debian package ships MNIST; put the four files there or
/// set root).
inline constexpr const char* kMnistRoot = "/usr/share/datasets/mnist";

struct MnistOptions {
  std::string root = kMnistRoot;  ///< directory with the four idx files (.gz or plain)

  static std::vector<FieldSpec> fields();
  static MnistOptions from(const ComponentSpec& spec);
};

/// MNIST (LeCun et al. 1998): 60,000 train and 10,000 test 28x28 grey digits, 10 classes, in
/// the idx format of Fashion-MNIST (same file names). Inputs are scaled to [0, 1] and
/// standardized with the training set's mean 0.1307 and deviation 0.3081.
class MnistDataset : public Dataset {
 public:
  explicit MnistDataset(MnistOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "mnist"; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  std::int64_t classes() const override { return 10; }
  std::vector<std::int64_t> example_shape() const override { return {1, 28, 28}; }

 private:
  DataSplit load(const std::string& prefix) const;
  MnistOptions options_;
  std::optional<DataSplit> train_, test_;
};

}  // namespace laconic::train
