#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/optim/optimizer.hpp"

namespace laconic::train {

struct SgdOptions {
  StepValue lr = 0.01;
  double momentum = 0;
  double weight_decay = 0;
  bool nesterov = false;

  static OptionFields<SgdOptions> fields();
};

/// SGD with momentum, with PyTorch's update rule: b = m*b + g; p -= lr * (nesterov ? g + m*b : b).
class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options) : Optimizer(options.lr), options_(options) {}
  std::string name() const override { return "sgd"; }
  void step(std::vector<torch::Tensor>& params) override;
  /// .grad() becomes lr * (nesterov ? d + m*b : b), with d = g + weight_decay * p and b the
  /// momentum buffer after this step (b = d without momentum).
  void compute_update(std::vector<torch::Tensor>& params) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  std::vector<torch::Tensor> state_tensors() override { return momentum_; }

 private:
  // Advances parameter i's momentum and returns the direction step() scales by the rate:
  // nesterov ? d + m*b : b (d itself without momentum; .grad() when there is no decay either).
  torch::Tensor direction(std::size_t i, const torch::Tensor& p);

  SgdOptions options_;
  std::vector<torch::Tensor> momentum_;
};

}  // namespace laconic::train
