#pragma once
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "engine/compress/compressor.hpp"
#include "engine/core/state_io.hpp"
#include "engine/core/step_value.hpp"

namespace laconic::train {

/// Updates parameters from their .grad(), which the worker has already averaged over workers.
class Optimizer {
 public:
  /// `lr`: the configured learning rate, which the run's schedule scales.
  explicit Optimizer(double lr) : base_lr_(lr), lr_(lr) {}
  /// A rate given as the file's function (diloco's outer optimizer) starts at 0: its owner sets
  /// it with set_lr() before every step.
  explicit Optimizer(const StepValue& lr) : Optimizer(lr.varies() ? 0.0 : lr.constant()) {}
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  /// Applies one update to `params` (same list, same order, every call).
  virtual void step(std::vector<torch::Tensor>& params) = 0;
  /// exchange = "update" (docs/compressors.md): replaces each parameter's .grad() by what step()
  /// would subtract from it (the learning rate applied), advancing the optimizer's state
  /// (momentum) exactly as step() would, and leaves the parameters as they are. The worker
  /// exchanges these updates and subtracts their mean.
  virtual void compute_update(std::vector<torch::Tensor>& params) = 0;
  /// exchange = "update": applies the workers' mean update, now in each parameter's .grad():
  /// subtracts it, as compute_update() made it; an optimizer whose step follows the exchange
  /// (DeMo's sign step) does that here.
  virtual void apply_exchanged(std::vector<torch::Tensor>& params) {
    torch::NoGradGuard no_grad;
    for (auto& p : params) p.sub_(p.grad());
  }
  /// An optimizer that compresses (DeMo, 1-bit Adam) brings the codec its updates are exchanged
  /// with, and the run exchanges updates (compute_update, the codec through the topology,
  /// apply_exchanged) whatever its `exchange`; the others bring none and use the run's compressor.
  virtual bool brings_codec() const { return false; }
  /// The codec it brings (a fresh one each call), or nullptr when brings_codec() is false.
  virtual std::unique_ptr<compress::Compressor> own_codec() const { return nullptr; }
  /// The learning rate of the following steps: the configured one times `factor` (set by the
  /// run's learning-rate schedule before each step).
  void set_lr_factor(double factor) { lr_ = base_lr_ * factor; }
  /// The learning rate of the following steps, as given (a Lua lr_schedule's value).
  void set_lr(double lr) { lr_ = lr; }
  /// The learning rate the next step uses.
  double lr() const { return lr_; }
  /// Writes what a checkpoint must keep (momentum buffers; not the rate, which the schedule
  /// sets before every step) and reads it back into an optimizer built from the same config.
  virtual void save_state(StateWriter& out) const { (void)out; }
  /// Its per-parameter state (momentum, moments) as tensors sharing its memory, for averaging
  /// across workers (churn's join state "averaged"); empty where it has none (yet).
  virtual std::vector<torch::Tensor> state_tensors() { return {}; }
  virtual void load_state(StateReader& in) { (void)in; }

 private:
  double base_lr_;
  double lr_;
};

}  // namespace laconic::train
