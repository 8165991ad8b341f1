#pragma once
#include <vector>

#include "engine/core/component.hpp"
#include "engine/train/optimizer.hpp"

namespace laconic::train {

struct SgdOptions {
  double lr = 0.01;         ///< learning rate
  double momentum = 0;      ///< heavy-ball momentum in [0, 1)
  double weight_decay = 0;  ///< L2 penalty added to the gradient
  bool nesterov = false;

  static std::vector<FieldSpec> fields();
  static SgdOptions from(const ComponentSpec& spec);
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

 private:
  // Advances parameter i's momentum and returns the direction step() scales by the rate:
  // nesterov ? d + m*b : b (d itself without momentum; .grad() when there is no decay either).
  torch::Tensor direction(std::size_t i, const torch::Tensor& p);

  SgdOptions options_;
  std::vector<torch::Tensor> momentum_;
};

}  // namespace laconic::train
