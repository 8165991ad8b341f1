#pragma once
#include <vector>

#include "engine/core/component.hpp"
#include "engine/train/optimizer.hpp"

namespace laconic::train {

struct SgdOptions {
  double lr = 0.01;            ///< learning rate
  double momentum = 0;         ///< heavy-ball momentum in [0, 1)
  double weight_decay = 0;     ///< L2 penalty added to the gradient
  bool nesterov = false;

  static std::vector<FieldSpec> fields();
  static SgdOptions from(const ComponentSpec& spec);
};

/// SGD with momentum, with PyTorch's update rule: b = m*b + g; p -= lr * (nesterov ? g + m*b : b).
class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options) : options_(options) {}
  std::string name() const override { return "sgd"; }
  void step(std::vector<torch::Tensor>& params) override;
  /// .grad() becomes lr * (nesterov ? d + m*b : b), with d = g + weight_decay * p and b the
  /// momentum buffer after this step (b = d without momentum).
  void compute_update(std::vector<torch::Tensor>& params) override;
  void set_lr_factor(double factor) override { lr_ = options_.lr * factor; }
  void set_lr(double lr) override { lr_ = lr; }
  double lr() const override { return lr_; }
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

 private:
  SgdOptions options_;
  double lr_ = options_.lr;
  std::vector<torch::Tensor> momentum_;
};

}  // namespace laconic::train
