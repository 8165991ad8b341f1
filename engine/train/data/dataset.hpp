#pragma once
// Datasets: a train and a test split held in memory as tensors.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

/// Examples of one split. Classification: inputs [N, ...] float32 and class labels [N] int64.
/// Language modelling: token inputs [N, T] int64 and next-token targets [N, T] int64.
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
  /// Number of classes of the labels (a language model's: the vocabulary size).
  virtual std::int64_t classes() const = 0;
  /// Shape of one input example, without the batch dimension ({1, 28, 28}; {T} for tokens),
  /// known without loading; empty when unknown.
  virtual std::vector<std::int64_t> example_shape() const { return {}; }
  /// Whether its splits are kept in the process's split cache (engine/train/data/split_cache.hpp),
  /// so that reading them before the workers are forked spares each worker the work.
  virtual bool cached() const { return false; }
  /// Tokens per example whose next token is predicted (labels [N, T]); 0 for classification.
  virtual std::int64_t sequence_length() const { return 0; }
};

}  // namespace laconic::train
