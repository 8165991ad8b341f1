#include "engine/train/gradient_hooks.hpp"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "engine/core/error.hpp"

namespace laconic::train {

GradientReadyHooks::GradientReadyHooks(const std::vector<torch::Tensor>& params, std::function<void(std::size_t)> ready)
    : ready_(std::move(ready)) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    LACONIC_ENFORCE(params[i].requires_grad() && params[i].is_leaf(), "parameter ", i,
                    " is not a leaf that requires a gradient");
    auto accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    LACONIC_ENFORCE(accumulator != nullptr, "parameter ", i, " has no gradient accumulator");
    keys_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          ready_(i);
          return outputs;
        })));
    accumulators_.push_back(std::move(accumulator));
  }
}

GradientReadyHooks::~GradientReadyHooks() {
  for (std::size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(keys_[i]);
}

}  // namespace laconic::train
