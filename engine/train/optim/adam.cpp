#include "engine/train/optim/adam.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {
namespace {

// Adam's and AdamW's fields: the same but for what weight_decay means.
template <class O>
OptionFields<O> adam_fields(const char* decay_doc) {
  return OptionFields<O>()
      .step_value("lr", &O::lr, "learning rate; a function of (epoch, step) only as diloco's outer optimizer (the run's own rate follows lr_schedule)", above(0))
      .number_pair("betas", &O::beta1, &O::beta2, "decay rates of the first and second moments", closed_open(0, 1))
      .number("eps", &O::eps, "added to the second moment's root", above(0))
      .number("weight_decay", &O::weight_decay, decay_doc, at_least(0));
}

}  // namespace

OptionFields<AdamOptions> AdamOptions::fields() { return adam_fields<AdamOptions>("L2 penalty added to the gradient"); }

OptionFields<AdamWOptions> AdamWOptions::fields() {
  return adam_fields<AdamWOptions>("decoupled weight decay: p = p * (1 - lr * weight_decay) each step");
}

torch::Tensor Adam::adam_step(std::size_t i, const torch::Tensor& p) {
  torch::Tensor d = p.grad();
  if (!options_.decoupled && options_.weight_decay != 0) d = d.add(p, options_.weight_decay);
  const auto [bias_correction1, bias_correction2] = moments_.advance(i, d, options_.beta1, options_.beta2);
  const auto denom = (moments_.v[i].sqrt() / std::sqrt(bias_correction2)).add_(options_.eps);
  return (moments_.m[i] / denom).mul_(lr() / bias_correction1);
}

void Adam::step(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  moments_.start(params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    if (options_.decoupled && options_.weight_decay != 0) p.mul_(1 - lr() * options_.weight_decay);
    p.sub_(adam_step(i, p));
  }
}

void Adam::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  moments_.start(params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    torch::Tensor update = adam_step(i, p);
    if (options_.decoupled && options_.weight_decay != 0) update.add_(p, lr() * options_.weight_decay);
    p.grad().copy_(update);  // in place: .grad() is a view into the flat buffer the topology exchanges
  }
}

void Adam::save_state(StateWriter& out) const {
  moments_.save(out);
}

void Adam::load_state(StateReader& in) {
  moments_.load(in);
}

}  // namespace laconic::train
