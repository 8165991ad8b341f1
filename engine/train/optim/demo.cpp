#include "engine/train/optim/demo.hpp"

#include "engine/compress/demo_codec.hpp"
#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<DemoOptions> DemoOptions::fields() {
  using O = DemoOptions;
  return OptionFields<O>()
      .step_value("lr", &O::lr, "learning rate: of the momentum's accumulation and of the sign step", above(0))
      .integer("chunk", &O::chunk,
               "side of the DCT chunks: a matrix in blocks of up to chunk x chunk, a vector in runs of up to chunk "
               "(each side the largest divisor of the dimension not above it)",
               at_least(1))
      .integer("topk", &O::topk, "DCT coefficients of largest magnitude each chunk sends a step", at_least(1))
      .number("decay", &O::decay, "the momentum's decay a step (demo.py's compression_decay)", closed_open(0, 1))
      .number("weight_decay", &O::weight_decay, "decoupled weight decay: p *= 1 - lr weight_decay a step",
              at_least(0));
}

void Demo::step(std::vector<torch::Tensor>&) {
  throw InvariantError("demo steps through its own exchange (compute_update, then apply_exchanged), never step()");
}

void Demo::compute_update(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (auto& p : params)
    if (p.grad().defined()) p.grad().mul_(lr());
}

void Demo::apply_exchanged(std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (auto& p : params) {
    if (options_.weight_decay != 0) p.mul_(1.0 - lr() * options_.weight_decay);
    p.sub_(p.grad().sign(), lr());
  }
}

std::unique_ptr<compress::Compressor> Demo::own_codec() const {
  return std::make_unique<compress::DemoCodec>(options_.chunk, options_.topk, options_.decay);
}

}  // namespace laconic::train
