#pragma once
// A dataset of the MNIST shape: four idx files (train/t10k images and labels, .gz or plain) in
// one directory, 28x28 grey images, 10 classes. fashion_mnist and mnist are two of these.
#include <optional>
#include <string>
#include <vector>

#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// What tells two idx datasets apart.
struct IdxDatasetInfo {
  const char* name;   ///< registry name ("mnist")
  const char* title;  ///< for messages ("MNIST")
  float mean;         ///< of the training images scaled to [0, 1]
  float deviation;
  /// How to get the file `base` that is missing (the error's last words).
  std::string (*hint)(const std::string& base);
};

class IdxImageDataset : public Dataset {
 public:
  /// Checks that the four files are in `root` (check_files).
  IdxImageDataset(std::string root, const IdxDatasetInfo& info) : root_(std::move(root)), info_(info) {
    check_files(root_, info_);
  }
  std::string name() const override { return info_.name; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  std::int64_t classes() const override { return 10; }
  bool cached() const override { return true; }
  std::vector<std::int64_t> example_shape() const override { return {1, 28, 28}; }

  /// ConfigError, naming the first missing file and the hint, unless all four are in `root`.
  /// Called when the dataset is built: the controller builds it before any worker starts (so a
  /// missing dataset stops a run there, and `laconic check` says so), after `--set` has given
  /// the experiment's `data.root` its value, not when the file is read.
  static void check_files(const std::string& root, const IdxDatasetInfo& info);

 private:
  DataSplit load(const std::string& prefix) const;
  std::string root_;
  IdxDatasetInfo info_;
  std::optional<DataSplit> train_, test_;
};

}  // namespace laconic::train
