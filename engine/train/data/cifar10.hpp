#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/dataset.hpp"

namespace laconic::train {

/// Where cifar10 looks by default (no Debian package ships CIFAR-10): the directory the
/// "CIFAR-10 binary version" archive unpacks to.
inline constexpr const char* kCifar10Root = "/usr/share/datasets/cifar-10-batches-bin";

struct Cifar10Options {
  std::string root = kCifar10Root;

  static OptionFields<Cifar10Options> fields();
};

/// CIFAR-10 (Krizhevsky 2009): 50,000 train and 10,000 test 32x32 colour images, 10 classes,
/// read from the binary batches (each record: 1 label byte, then 1024 red, 1024 green and 1024
/// blue bytes, rows in order). Inputs [N, 3, 32, 32] are scaled to [0, 1] and standardized per
/// channel with the training set's means (0.4914, 0.4822, 0.4465) and deviations (0.2470,
/// 0.2435, 0.2616). No augmentation.
class Cifar10Dataset : public Dataset {
 public:
  /// ConfigError, naming the first missing batch file, unless all six are in the root: the
  /// controller builds the dataset before any worker starts (after `--set` applies).
  explicit Cifar10Dataset(Cifar10Options options);
  std::string name() const override { return "cifar10"; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  std::int64_t classes() const override { return 10; }
  bool cached() const override { return true; }
  std::vector<std::int64_t> example_shape() const override { return {3, 32, 32}; }

  /// The five training batches' file names, then the test batch's.
  static std::vector<std::string> file_names();

 private:
  DataSplit load(const std::vector<std::string>& files) const;  // through the split cache
  DataSplit read(const std::vector<std::string>& files) const;  // decodes the files
  Cifar10Options options_;
  std::optional<DataSplit> train_, test_;
};

}  // namespace laconic::train
