#pragma once
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/idx_dataset.hpp"

namespace laconic::train {

/// Where Debian's dataset-fashion-mnist package installs the idx files.
inline constexpr const char* kFashionMnistRoot = "/usr/share/datasets/fashion-mnist";

struct FashionMnistOptions {
  std::string root = kFashionMnistRoot;

  static OptionFields<FashionMnistOptions> fields();
};

/// Fashion-MNIST (Xiao et al. 2017): 60,000 train and 10,000 test 28x28 grey images, 10 classes.
/// Inputs are scaled to [0, 1] and standardized with the training set's mean and deviation.
class FashionMnistDataset : public IdxImageDataset {
 public:
  explicit FashionMnistDataset(FashionMnistOptions options);
};

}  // namespace laconic::train
