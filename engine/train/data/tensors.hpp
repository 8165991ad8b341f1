#pragma once
// Your own data: two files written by PyTorch's torch.save({"inputs": ..., "labels": ...})
// (docs/models-and-data.md, "Your own data").
#include <optional>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/dataset.hpp"

namespace laconic::train {

struct TensorsOptions {
  std::string train;
  std::string test;
  std::int64_t classes = 0;

  static OptionFields<TensorsOptions> fields();
};

/// Each file holds a dict with "inputs" and "labels". Classification: inputs [N, ...] of a
/// floating type (read as float32), labels [N] of an integer type (read as int64, each in
/// [0, classes)). Language modelling: inputs and labels [N, T] of an integer type (tokens and
/// next tokens). The files are read when the split is first needed, every check naming the file
/// and what it holds (ConfigError): a missing key, a shape or type that does not fit, labels out
/// of range, a test split unlike the training one.
class TensorsDataset : public Dataset {
 public:
  explicit TensorsDataset(TensorsOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "tensors"; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  /// The `classes` field, or (reading the training split) its largest label + 1.
  std::int64_t classes() const override;
  /// One training example's shape (reads the training split).
  std::vector<std::int64_t> example_shape() const override;
  std::int64_t sequence_length() const override;

 private:
  const DataSplit& loaded_train() const;

  TensorsOptions options_;
  mutable std::optional<DataSplit> train_;
  std::optional<DataSplit> test_;
};

}  // namespace laconic::train
