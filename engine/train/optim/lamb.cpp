#include "engine/train/optim/lamb.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {

OptionFields<LambOptions> LambOptions::fields() {
  using O = LambOptions;
  return OptionFields<O>()
      .step_value("lr", &O::lr, "learning rate; a function of (epoch, step) only as diloco's outer optimizer (the run's own rate follows lr_schedule)", above(0))
      .number_pair("betas", &O::beta1, &O::beta2, "decay rates of the first and second moments", closed_open(0, 1))
      .number("eps", &O::eps, "added to the second moment's root", above(0))
      .number("weight_decay", &O::weight_decay, "decoupled weight decay, inside the trust ratio", at_least(0));
}

torch::Tensor Lamb::lamb_step(std::size_t i, const torch::Tensor& p) {
  const torch::Tensor& g = p.grad();
  const auto [bias_correction1, bias_correction2] = moments_.advance(i, g, options_.beta1, options_.beta2);
  torch::Tensor u =
      (moments_.m[i] / bias_correction1) / ((moments_.v[i] / bias_correction2).sqrt_().add_(options_.eps));
  if (options_.weight_decay != 0) u.add_(p, options_.weight_decay);
  const double weight_norm = p.norm().item<double>();
  const double update_norm = u.norm().item<double>();
  const double trust = weight_norm > 0 && update_norm > 0 ? weight_norm / update_norm : 1.0;
  return u.mul_(lr() * trust);
}

void Lamb::step(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  moments_.start(params);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].grad().defined()) params[i].sub_(lamb_step(i, params[i]));
}

void Lamb::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  moments_.start(params);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].grad().defined()) params[i].grad().copy_(lamb_step(i, params[i]));
}

void Lamb::save_state(StateWriter& out) const {
  moments_.save(out);
}

void Lamb::load_state(StateReader& in) {
  moments_.load(in);
}

}  // namespace laconic::train
