#include "engine/train/synthetic.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/split_cache.hpp"

namespace laconic::train {

std::vector<FieldSpec> SyntheticOptions::fields() {
  return {{"shape", FieldType::IntList, std::vector<std::int64_t>{3, 32, 32},
           "shape of one example, e.g. {3, 32, 32} or {1, 28, 28}"},
          {"classes", FieldType::Int, std::int64_t{10}, "number of classes, >= 2"},
          {"n", FieldType::Int, std::int64_t{10000}, "training examples"},
          {"test_n", FieldType::Int, std::int64_t{2000}, "test examples"},
          {"seed", FieldType::Int, std::int64_t{1},
           "seed of the data (class means and noise), independent of the run's seed"}};
}

SyntheticOptions SyntheticOptions::from(const ComponentSpec& spec) {
  SyntheticOptions o;
  o.shape = spec.integers("shape");
  o.classes = spec.integer("classes");
  o.n = spec.integer("n");
  o.test_n = spec.integer("test_n");
  o.seed = spec.integer("seed");
  if (o.shape.empty()) throw ConfigError("synthetic.shape must list at least one dimension, got {}");
  std::int64_t values = 1;
  for (const std::int64_t d : o.shape) {
    if (d < 1) throw ConfigError(str_cat("synthetic.shape dimensions must be >= 1, got ", format_value(o.shape)));
    values *= d;
    if (values > (std::int64_t{1} << 24))
      throw ConfigError(str_cat("synthetic.shape ", format_value(o.shape), " has more than 2^24 values per example"));
  }
  if (o.classes < 2) throw ConfigError(str_cat("synthetic.classes must be >= 2, got ", o.classes));
  if (o.n < 1) throw ConfigError(str_cat("synthetic.n must be >= 1, got ", o.n));
  if (o.test_n < 1) throw ConfigError(str_cat("synthetic.test_n must be >= 1, got ", o.test_n));
  if (values * (o.n + o.test_n) > (std::int64_t{1} << 31))
    throw ConfigError(str_cat("synthetic would hold ", values * (o.n + o.test_n),
                              " floats (> 2^31, 8 GiB): lower n, test_n or shape"));
  return o;
}

SyntheticDataset::SyntheticDataset(SyntheticOptions options) : options_(std::move(options)) {}

DataSplit SyntheticDataset::generate(std::int64_t n, std::uint64_t stream) const {
  const std::string key = str_cat("synthetic\n", format_value(options_.shape), "\n", options_.classes, "\n", n, "\n",
                                  options_.seed, "\n", stream);
  return cached_split(key, [&] {
    std::vector<std::int64_t> means_shape = {options_.classes};
    means_shape.insert(means_shape.end(), options_.shape.begin(), options_.shape.end());
    // One generator for the means (shared by both splits), one per split for the noise: the test
    // split does not depend on n, nor the training split on test_n.
    const auto seed = static_cast<std::uint64_t>(options_.seed);
    auto means = torch::randn(means_shape, at::detail::createCPUGenerator(seed * 3));
    auto labels = torch::arange(n, torch::kInt64).remainder(options_.classes);
    std::vector<std::int64_t> shape = {n};
    shape.insert(shape.end(), options_.shape.begin(), options_.shape.end());
    auto noise = torch::randn(shape, at::detail::createCPUGenerator(seed * 3 + stream));
    auto inputs = means.index_select(0, labels).add_(noise).div_(std::sqrt(2.0));
    return DataSplit{inputs.contiguous(), labels};
  });
}

const DataSplit& SyntheticDataset::train() {
  if (!train_) train_ = generate(options_.n, 1);
  return *train_;
}

const DataSplit& SyntheticDataset::test() {
  if (!test_) test_ = generate(options_.test_n, 2);
  return *test_;
}

}  // namespace laconic::train
