#pragma once
#include <optional>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/data/dataset.hpp"

namespace laconic::train {

struct SyntheticOptions {
  std::vector<std::int64_t> shape = {3, 32, 32};
  std::int64_t classes = 10;
  std::int64_t n = 10000;
  std::int64_t test_n = 2000;
  std::int64_t seed = 1;

  static OptionFields<SyntheticOptions> fields();
};

/// Learnable class-conditional clusters of any shape, so CIFAR-sized models can be trained and
/// timed without CIFAR: each class has a mean example drawn N(0, 1) per value; an example of
/// class c is (mean_c + N(0, 1) noise) / sqrt(2), so every value has unit variance. Labels
/// cycle through the classes (balanced). Generated with LibTorch's CPU generator seeded with
/// `seed`: identical for a seed on every machine.
class SyntheticDataset : public Dataset {
 public:
  explicit SyntheticDataset(SyntheticOptions options);
  std::string name() const override { return "synthetic"; }
  const DataSplit& train() override;
  const DataSplit& test() override;
  std::int64_t classes() const override { return options_.classes; }
  bool cached() const override { return true; }
  std::vector<std::int64_t> example_shape() const override { return options_.shape; }

 private:
  DataSplit generate(std::int64_t n, std::uint64_t stream) const;
  SyntheticOptions options_;
  std::optional<DataSplit> train_, test_;
};

}  // namespace laconic::train
