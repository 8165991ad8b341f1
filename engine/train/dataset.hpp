#pragma once
// Datasets: a train and a test split held in memory as tensors.
#include <string>

#include <torch/torch.h>

namespace laconic::train {

/// Examples of one split: inputs [N, ...] float32 and integer class labels [N] int64.
struct DataSplit {
  torch::Tensor inputs;
  torch::Tensor labels;
  std::int64_t size() const { return labels.size(0); }
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string name() const = 0;
  /// Loads (once) and returns the training split.
  virtual const DataSplit& train() = 0;
  /// Loads (once) and returns the test split.
  virtual const DataSplit& test() = 0;
  /// Number of classes of the labels.
  virtual std::int64_t classes() const = 0;
};

}  // namespace laconic::train
