#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/optim/optimizer.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {

struct OnebitAdamOptions {
  StepValue lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  std::int64_t warmup_steps = 100000;  // DeepSpeed's freeze_step
  bool bias_correction = true;

  static OptionFields<OnebitAdamOptions> fields();
};

/// 1-bit Adam (Tang et al., ICML 2021, "1-bit Adam: Communication Efficient Large-Scale Training
/// with Adam's Convergence Speed"; DeepSpeed's OnebitAdam). For `warmup_steps` steps it is Adam
/// on the workers' mean gradient (an fp32 allreduce, the codec's warm-up). Then the variance v is
/// frozen: each worker updates its momentum m = beta1 m + (1 - beta1) g with its own gradient, the
/// codec (compress::OnebitAdamCodec) exchanges it in 1 bit an element with error feedback, m
/// becomes the workers' mean of what they sent, and p -= lr m / (sqrt(v) + eps), but for elements
/// no warm-up gradient reached (v = 0, which a 1-bit momentum, never 0, would divide by: DeepSpeed
/// asks its users for an exp_avg_mask of them; laconic takes it from v). Weight decay is
/// decoupled: p *= 1 - lr weight_decay. With bias_correction (the default) the warm-up is Adam as
/// `adam` steps (torch's), and the frozen variance keeps the correction of its last step, so the
/// step size is continuous at the freeze; false is DeepSpeed's arithmetic, which corrects neither.
/// Its compressor must be none(), its topology allreduce or allgather, its schedule synchronous.
class OnebitAdam : public Optimizer {
 public:
  explicit OnebitAdam(OnebitAdamOptions options) : Optimizer(options.lr), options_(options) {}
  std::string name() const override { return "onebit_adam"; }
  /// Steps only through its exchange (compute_update, then apply_exchanged): InvariantError.
  void step(std::vector<torch::Tensor>& params) override;
  /// Counts the step. In the warm-up .grad() stays the gradient; after it the momentum takes the
  /// gradient and .grad() becomes the momentum, which the codec compresses.
  void compute_update(std::vector<torch::Tensor>& params) override;
  /// The warm-up: Adam's step on the mean gradient in .grad(). After it: m = .grad() (the mean of
  /// the momenta sent), p -= lr m / (sqrt(v / correction) + eps).
  void apply_exchanged(std::vector<torch::Tensor>& params) override;
  bool brings_codec() const override { return true; }
  std::unique_ptr<compress::Compressor> own_codec() const override;
  /// The step count and both moments of every parameter.
  void save_state(StateWriter& out) const override { moments_.save(out); }
  void load_state(StateReader& in) override {
    moments_.load(in);
    frozen_.clear();  // derived from v: made again at the next frozen step
  }

  /// Whether the step being taken is past the warm-up (the variance frozen).
  bool frozen() const { return moments_.steps > options_.warmup_steps; }
  /// The first and second moments of parameter i.
  const torch::Tensor& momentum(std::size_t i) const { return moments_.m.at(i); }
  const torch::Tensor& variance(std::size_t i) const { return moments_.v.at(i); }

 private:
  // Per parameter, from the frozen variance, made once at the first step past the warm-up: the
  // step's denominator sqrt(v / correction) + eps, and where v is not 0 (the momentum's mask).
  struct Frozen {
    torch::Tensor denominator, reached;
  };
  const Frozen& frozen_of(std::size_t i, double correction2);

  OnebitAdamOptions options_;
  AdamMoments moments_;
  std::vector<Frozen> frozen_;
};

}  // namespace laconic::train
