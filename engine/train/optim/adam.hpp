#pragma once
// Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019), with PyTorch's update rules, on
// each parameter's .grad() (a view into the worker's flat gradient buffer).
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/optim/optimizer.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {

struct AdamOptions {
  StepValue lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool decoupled = false;  // not a field: AdamW's; p = p * (1 - lr * weight_decay) before the step

  static OptionFields<AdamOptions> fields();
};

/// The same options with AdamW's name and default (weight_decay 0.01, decoupled).
struct AdamWOptions : AdamOptions {
  AdamWOptions() {
    weight_decay = 1e-2;
    decoupled = true;
  }
  static OptionFields<AdamWOptions> fields();
};

/// Per parameter, at step t (from 1): d = g (+ weight_decay * p for Adam);
/// m = beta1 m + (1 - beta1) d; v = beta2 v + (1 - beta2) d^2;
/// p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps), after p *= 1 - lr *
/// weight_decay for AdamW. Matches torch::optim::Adam and AdamW step for step.
class Adam : public Optimizer {
 public:
  explicit Adam(AdamOptions options) : Optimizer(options.lr), options_(options) {}
  std::string name() const override { return options_.decoupled ? "adamw" : "adam"; }
  void step(std::vector<torch::Tensor>& params) override;
  /// .grad() becomes what step() would subtract: (lr * weight_decay * p for AdamW) + the Adam step.
  void compute_update(std::vector<torch::Tensor>& params) override;
  /// The step count and both moments of every parameter.
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  std::vector<torch::Tensor> state_tensors() override { return moments_.tensors(); }

 private:
  // Advances the moments of parameter i by its gradient and returns the Adam step (without the
  // learning rate's decoupled decay) to subtract from it.
  torch::Tensor adam_step(std::size_t i, const torch::Tensor& p);
  AdamOptions options_;
  AdamMoments moments_;
};

/// AdamW: Adam built from AdamW's options.
class AdamW : public Adam {
 public:
  explicit AdamW(AdamWOptions options) : Adam(options) {}
};

}  // namespace laconic::train
