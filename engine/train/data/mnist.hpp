#pragma once
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/idx_dataset.hpp"

namespace laconic::train {

/// Where mnist looks by default (no Debian package ships MNIST; put the four files there or
/// set root).
inline constexpr const char* kMnistRoot = "/usr/share/datasets/mnist";

struct MnistOptions {
  std::string root = kMnistRoot;

  static OptionFields<MnistOptions> fields();
};

/// MNIST (LeCun et al. 1998): 60,000 train and 10,000 test 28x28 grey digits, 10 classes, in
/// the idx format of Fashion-MNIST (same file names). Inputs are scaled to [0, 1] and
/// standardized with the training set's mean 0.1307 and deviation 0.3081.
class MnistDataset : public IdxImageDataset {
 public:
  explicit MnistDataset(MnistOptions options);
};

}  // namespace laconic::train
