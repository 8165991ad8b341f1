#pragma once
// LAMB (You et al. 2020, "Large Batch Optimization for Deep Learning: Training BERT in 76
// minutes", Algorithm 2): Adam's direction, scaled per layer by a trust ratio.
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/optim/optimizer.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {

struct LambOptions {
  StepValue lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.01;

  static OptionFields<LambOptions> fields();
};

/// Per parameter tensor (a layer), at step t (from 1): m = beta1 m + (1 - beta1) g;
/// v = beta2 v + (1 - beta2) g^2; r = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps);
/// u = r + weight_decay * p; trust = ||p|| / ||u|| (1 when either norm is 0); p -= lr * trust * u.
class Lamb : public Optimizer {
 public:
  explicit Lamb(LambOptions options) : Optimizer(options.lr), options_(options) {}
  std::string name() const override { return "lamb"; }
  void step(std::vector<torch::Tensor>& params) override;
  void compute_update(std::vector<torch::Tensor>& params) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  std::vector<torch::Tensor> state_tensors() override { return moments_.tensors(); }

 private:
  // Advances the moments of parameter i and returns lr * trust * u, what a step subtracts.
  torch::Tensor lamb_step(std::size_t i, const torch::Tensor& p);
  LambOptions options_;
  AdamMoments moments_;
};

}  // namespace laconic::train
