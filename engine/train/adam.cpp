#include "engine/train/adam.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/optimizer_state.hpp"

namespace laconic::train {
namespace {

std::vector<FieldSpec> adam_fields(double weight_decay, const char* decay_doc) {
  return {{"lr", FieldType::Number, 1e-3, "learning rate"},
          {"betas", FieldType::NumberList, std::vector<double>{0.9, 0.999},
           "decay rates of the first and second moments, each in [0, 1)"},
          {"eps", FieldType::Number, 1e-8, "added to the second moment's root, > 0"},
          {"weight_decay", FieldType::Number, weight_decay, decay_doc}};
}

AdamOptions read(const ComponentSpec& spec, bool decoupled) {
  AdamOptions o;
  const std::string& n = spec.name;
  o.lr = spec.number("lr");
  const auto betas = spec.numbers("betas");
  o.eps = spec.number("eps");
  o.weight_decay = spec.number("weight_decay");
  o.decoupled = decoupled;
  if (!(o.lr > 0)) throw ConfigError(str_cat(n, ".lr must be > 0, got ", o.lr));
  if (betas.size() != 2 || !(betas[0] >= 0 && betas[0] < 1) || !(betas[1] >= 0 && betas[1] < 1))
    throw ConfigError(str_cat(n, ".betas must be two numbers in [0, 1), got ", format_value(Value{betas})));
  o.beta1 = betas[0];
  o.beta2 = betas[1];
  if (!(o.eps > 0)) throw ConfigError(str_cat(n, ".eps must be > 0, got ", o.eps));
  if (!(o.weight_decay >= 0)) throw ConfigError(str_cat(n, ".weight_decay must be >= 0, got ", o.weight_decay));
  return o;
}

}  // namespace

std::vector<FieldSpec> AdamOptions::fields() { return adam_fields(0.0, "L2 penalty added to the gradient, >= 0"); }
AdamOptions AdamOptions::from(const ComponentSpec& spec) { return read(spec, false); }

std::vector<FieldSpec> AdamWOptions::fields() {
  return adam_fields(1e-2, "decoupled weight decay: p = p * (1 - lr * weight_decay) each step, >= 0");
}
AdamWOptions AdamWOptions::from(const ComponentSpec& spec) {
  AdamWOptions o;
  static_cast<AdamOptions&>(o) = read(spec, true);
  return o;
}

torch::Tensor Adam::adam_step(std::size_t i, const torch::Tensor& p) {
  torch::Tensor d = p.grad();
  if (!options_.decoupled && options_.weight_decay != 0) d = d.add(p, options_.weight_decay);
  m_[i].mul_(options_.beta1).add_(d, 1 - options_.beta1);
  v_[i].mul_(options_.beta2).addcmul_(d, d, 1 - options_.beta2);
  const double bias_correction1 = 1 - std::pow(options_.beta1, static_cast<double>(steps_));
  const double bias_correction2 = 1 - std::pow(options_.beta2, static_cast<double>(steps_));
  const auto denom = (v_[i].sqrt() / std::sqrt(bias_correction2)).add_(options_.eps);
  return (m_[i] / denom).mul_(lr() / bias_correction1);
}

void Adam::start(const std::vector<torch::Tensor>& params) {
  if (m_.empty())
    for (const auto& p : params) {
      m_.push_back(torch::zeros_like(p));
      v_.push_back(torch::zeros_like(p));
    }
  ++steps_;
}

void Adam::step(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  start(params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    if (options_.decoupled && options_.weight_decay != 0) p.mul_(1 - lr() * options_.weight_decay);
    p.sub_(adam_step(i, p));
  }
}

void Adam::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  start(params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    torch::Tensor update = adam_step(i, p);
    if (options_.decoupled && options_.weight_decay != 0) update.add_(p, lr() * options_.weight_decay);
    p.grad().copy_(update);  // in place: .grad() is a view into the flat buffer the topology exchanges
  }
}

void Adam::save_state(StateWriter& out) const {
  out.i64(steps_);
  save_tensors(out, m_);
  save_tensors(out, v_);
}

void Adam::load_state(StateReader& in) {
  steps_ = in.i64();
  load_tensors(in, m_);
  load_tensors(in, v_);
}

}  // namespace laconic::train
