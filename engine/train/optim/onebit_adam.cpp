#include "engine/train/optim/onebit_adam.hpp"

#include <algorithm>
#include <cmath>

#include "engine/compress/onebit_adam_codec.hpp"
#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<OnebitAdamOptions> OnebitAdamOptions::fields() {
  using O = OnebitAdamOptions;
  return OptionFields<O>()
      .step_value("lr", &O::lr, "learning rate", above(0))
      .number_pair("betas", &O::beta1, &O::beta2, "decay rates of the first and second moments", closed_open(0, 1))
      .number("eps", &O::eps, "added to the second moment's root", above(0))
      .number("weight_decay", &O::weight_decay, "decoupled weight decay: p = p * (1 - lr * weight_decay) each step",
              at_least(0))
      .integer("warmup_steps", &O::warmup_steps,
               "steps of dense Adam (an fp32 allreduce) before the variance freezes and the momentum goes 1-bit "
               "(DeepSpeed's freeze_step)",
               at_least(1))
      .flag("bias_correction", &O::bias_correction,
            "Adam's bias corrections in the warm-up, the last one kept with the frozen variance; false: DeepSpeed's "
            "arithmetic, none");
}

void OnebitAdam::step(std::vector<torch::Tensor>&) {
  throw InvariantError("onebit_adam steps through its own exchange (compute_update, then apply_exchanged), never step()");
}

void OnebitAdam::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  moments_.start(params);
  if (!frozen()) return;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& g = params[i].mutable_grad();
    if (!g.defined()) continue;
    moments_.m[i].mul_(options_.beta1).add_(g, 1 - options_.beta1);
    g.copy_(moments_.m[i]);  // in place: .grad() is a view into the flat buffer the codec compresses
  }
}

const OnebitAdam::Frozen& OnebitAdam::frozen_of(std::size_t i, double correction2) {
  if (frozen_.empty()) frozen_.resize(moments_.v.size());
  Frozen& f = frozen_.at(i);
  if (!f.denominator.defined())
    f = {(moments_.v[i].sqrt() / std::sqrt(correction2)).add_(options_.eps), moments_.v[i] != 0};
  return f;
}

void OnebitAdam::apply_exchanged(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  const bool frozen_now = frozen();
  // The variance's correction: this step's in the warm-up, the warm-up's last after it.
  const double t = static_cast<double>(std::min(moments_.steps, options_.warmup_steps));
  const double correction2 = options_.bias_correction ? 1 - std::pow(options_.beta2, t) : 1.0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (options_.weight_decay != 0) p.mul_(1 - lr() * options_.weight_decay);
    if (frozen_now) {
      // DeepSpeed's exp_avg_mask, derived: an element no warm-up gradient reached has a variance
      // of 0, which a 1-bit momentum (never 0) would divide by.
      const Frozen& f = frozen_of(i, correction2);
      moments_.m[i].copy_(g).mul_(f.reached);
      p.sub_((moments_.m[i] / f.denominator).mul_(lr()));
      continue;
    }
    const double correction1 = moments_.advance(i, g, options_.beta1, options_.beta2).first;
    const double step_size = options_.bias_correction ? lr() / correction1 : lr();
    const auto denominator = (moments_.v[i].sqrt() / std::sqrt(correction2)).add_(options_.eps);
    p.sub_((moments_.m[i] / denominator).mul_(step_size));
  }
}

std::unique_ptr<compress::Compressor> OnebitAdam::own_codec() const {
  return std::make_unique<compress::OnebitAdamCodec>(options_.warmup_steps);
}

}  // namespace laconic::train
