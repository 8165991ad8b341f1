#pragma once
// Datasets: a train and a test split held in memory as tensors.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace laconic::train {

/// Examples of one split. Classification: inputs [N, ...] float32 and class labels [N] int64.
/// Language modelling: token inputs [N, T] and next-token targets [N, T], int64 (word ids) or
/// uint8 (bytes, an eighth of the memory; widened per batch by batch_of).
struct DataSplit {
  torch::Tensor inputs;
  torch::Tensor labels;
  std::int64_t size() const { return labels.size(0); }
};

/// A batch's inputs or labels as models and losses take them: byte tokens (uint8) widened to
/// int64, anything else as it is.
inline torch::Tensor batch_of(const torch::Tensor& examples) {
  return examples.scalar_type() == torch::kUInt8 ? examples.to(torch::kInt64) : examples;
}

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
  /// The field that sets sequence_length(), for messages: "bptt" (text), "context" (perldoc).
  virtual std::string sequence_field() const { return "bptt"; }
  /// The held-out split evaluated while training (test_* metrics): test() unless a dataset
  /// keeps its test split untouched and evaluates on a validation split (perldoc).
  virtual const DataSplit& evaluation() { return test(); }
  /// Which split evaluation() is, for facts and messages: "test" or "validation".
  virtual std::string evaluation_split() const { return "test"; }
  /// Bytes of text per token of the evaluated split (1 for byte tokens): turns a loss per token
  /// into bits per byte; 0 where the examples are not text.
  virtual double bytes_per_token() { return 0; }
};

}  // namespace laconic::train
