#include "engine/train/lamb.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/optimizer_state.hpp"

namespace laconic::train {

std::vector<FieldSpec> LambOptions::fields() {
  return {{"lr", FieldType::Number, 1e-3, "learning rate"},
          {"betas", FieldType::NumberList, std::vector<double>{0.9, 0.999},
           "decay rates of the first and second moments, each in [0, 1)"},
          {"eps", FieldType::Number, 1e-6, "added to the second moment's root, > 0"},
          {"weight_decay", FieldType::Number, 0.01, "decoupled weight decay, inside the trust ratio, >= 0"}};
}

LambOptions LambOptions::from(const ComponentSpec& spec) {
  LambOptions o;
  o.lr = spec.number("lr");
  const auto betas = spec.numbers("betas");
  o.eps = spec.number("eps");
  o.weight_decay = spec.number("weight_decay");
  if (!(o.lr > 0)) throw ConfigError(str_cat("lamb.lr must be > 0, got ", o.lr));
  if (betas.size() != 2 || !(betas[0] >= 0 && betas[0] < 1) || !(betas[1] >= 0 && betas[1] < 1))
    throw ConfigError(str_cat("lamb.betas must be two numbers in [0, 1), got ", format_value(Value{betas})));
  o.beta1 = betas[0];
  o.beta2 = betas[1];
  if (!(o.eps > 0)) throw ConfigError(str_cat("lamb.eps must be > 0, got ", o.eps));
  if (!(o.weight_decay >= 0)) throw ConfigError(str_cat("lamb.weight_decay must be >= 0, got ", o.weight_decay));
  return o;
}

void Lamb::start(const std::vector<torch::Tensor>& params) {
  if (m_.empty())
    for (const auto& p : params) {
      m_.push_back(torch::zeros_like(p));
      v_.push_back(torch::zeros_like(p));
    }
  ++steps_;
}

torch::Tensor Lamb::lamb_step(std::size_t i, const torch::Tensor& p) {
  const torch::Tensor& g = p.grad();
  m_[i].mul_(options_.beta1).add_(g, 1 - options_.beta1);
  v_[i].mul_(options_.beta2).addcmul_(g, g, 1 - options_.beta2);
  const double bias_correction1 = 1 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double bias_correction2 = 1 - std::pow(options_.beta2, static_cast<double>(steps_));
  torch::Tensor u = (m_[i] / bias_correction1) / ((v_[i] / bias_correction2).sqrt_().add_(options_.eps));
  if (options_.weight_decay != 0) u.add_(p, options_.weight_decay);
  const double weight_norm = p.norm().item<double>();
  const double update_norm = u.norm().item<double>();
  const double trust = weight_norm > 0 && update_norm > 0 ? weight_norm / update_norm : 1.0;
  return u.mul_(lr() * trust);
}

void Lamb::step(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  start(params);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].grad().defined()) params[i].sub_(lamb_step(i, params[i]));
}

void Lamb::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  start(params);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].grad().defined()) params[i].grad().copy_(lamb_step(i, params[i]));
}

void Lamb::save_state(StateWriter& out) const {
  out.i64(steps_);
  save_tensors(out, m_);
  save_tensors(out, v_);
}

void Lamb::load_state(StateReader& in) {
  steps_ = in.i64();
  load_tensors(in, m_);
  load_tensors(in, v_);
}

}  // namespace laconic::train
