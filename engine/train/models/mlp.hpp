#pragma once
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/models/model.hpp"

namespace laconic::train {

struct MlpOptions {
  std::vector<std::int64_t> sizes = {784, 392, 50, 10};
  std::string activation = "tanh";

  static OptionFields<MlpOptions> fields();
};

/// A fully connected network, as in Øland & Raj (2015): sizes {784, 392, 50, 10} is
/// 784-392-50-10 with the activation after every layer but the last. Inputs [N, ...] are
/// flattened, so sizes[0] must equal the values per example (784 for 1x28x28, 3072 for
/// 3x32x32); the run is refused before it starts otherwise.
class Mlp : public Model {
 public:
  explicit Mlp(MlpOptions options);
  std::string name() const override { return "mlp"; }
  torch::Tensor forward(torch::Tensor inputs) override;
  std::int64_t outputs() const override { return options_.sizes.back(); }
  /// "the last entry of mlp.sizes to 10 (sizes = {784, 100, 10})".
  std::string outputs_setting(std::int64_t wanted) const override;
  void check_input(const std::vector<std::int64_t>& shape) const override;

 private:
  MlpOptions options_;
  torch::Tensor (*activation_)(const torch::Tensor&) = nullptr;
  std::vector<torch::nn::Linear> layers_;
};

}  // namespace laconic::train
