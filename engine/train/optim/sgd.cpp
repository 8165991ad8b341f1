#include "engine/train/optim/sgd.hpp"

#include "engine/core/error.hpp"
#include "engine/train/optim/optimizer_state.hpp"

namespace laconic::train {

OptionFields<SgdOptions> SgdOptions::fields() {
  using O = SgdOptions;
  return OptionFields<O>()
      .step_value("lr", &O::lr, "learning rate; a function of (epoch, step) only as diloco's outer optimizer (the run's own rate follows lr_schedule)", above(0))
      .number("momentum", &O::momentum, "heavy-ball momentum factor", closed_open(0, 1))
      .number("weight_decay", &O::weight_decay, "L2 penalty added to the gradient", at_least(0))
      .flag("nesterov", &O::nesterov, "use Nesterov momentum (needs momentum > 0)")
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.nesterov && o.momentum == 0)
          throw ConfigError(str_cat(spec.name, ".nesterov needs momentum > 0, got momentum = 0"));
      });
}

torch::Tensor Sgd::direction(std::size_t i, const torch::Tensor& p) {
  torch::Tensor d = p.grad();
  if (options_.weight_decay != 0) d = d.add(p, options_.weight_decay);
  if (options_.momentum > 0) {
    auto& b = momentum_[i];
    b.mul_(options_.momentum).add_(d);
    d = options_.nesterov ? d.add(b, options_.momentum) : b;
  }
  return d;
}

void Sgd::step(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  if (momentum_.empty() && options_.momentum > 0)
    for (auto& p : params) momentum_.push_back(torch::zeros_like(p));
  follow_device(momentum_, params);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].grad().defined()) params[i].sub_(direction(i, params[i]), lr());
}

void Sgd::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  if (momentum_.empty() && options_.momentum > 0)
    for (auto& p : params) momentum_.push_back(torch::zeros_like(p));
  follow_device(momentum_, params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    torch::Tensor g = p.grad();
    const torch::Tensor d = direction(i, p);
    // In place: .grad() is a view into the worker's flat buffer, which the topology exchanges.
    if (!d.is_same(g)) g.copy_(d);
    g.mul_(lr());
  }
}

void Sgd::save_state(StateWriter& out) const { save_tensors(out, momentum_); }

void Sgd::load_state(StateReader& in) { load_tensors(in, momentum_); }

}  // namespace laconic::train
