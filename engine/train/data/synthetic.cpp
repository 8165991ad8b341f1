#include "engine/train/data/synthetic.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/data/split_cache.hpp"

namespace laconic::train {

OptionFields<SyntheticOptions> SyntheticOptions::fields() {
  using O = SyntheticOptions;
  return OptionFields<O>()
      .integers("shape", &O::shape, "shape of one example, e.g. {3, 32, 32} or {1, 28, 28}")
      .integer("classes", &O::classes, "number of classes", at_least(2))
      .integer("n", &O::n, "training examples", at_least(1))
      .integer("test_n", &O::test_n, "test examples", at_least(1))
      .integer("seed", &O::seed, "seed of the data (class means and noise), independent of the run's seed")
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.shape.empty()) throw ConfigError(str_cat(spec.name, ".shape must list at least one dimension, got {}"));
        std::int64_t values = 1;
        for (const std::int64_t d : o.shape) {
          if (d < 1)
            throw ConfigError(str_cat(spec.name, ".shape dimensions must be >= 1, got ", format_value(o.shape)));
          values *= d;
          if (values > (std::int64_t{1} << 24))
            throw ConfigError(
                str_cat(spec.name, ".shape ", format_value(o.shape), " has more than 2^24 values per example"));
        }
        if (values * (o.n + o.test_n) > (std::int64_t{1} << 31))
          throw ConfigError(str_cat(spec.name, " would hold ", values * (o.n + o.test_n),
                                    " floats (> 2^31, 8 GiB): lower n, test_n or shape"));
      });
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
