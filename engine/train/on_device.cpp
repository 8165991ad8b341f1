#include "engine/train/on_device.hpp"

#include <torch/cuda.h>
#include <torch/nn/module.h>

#include "engine/train/step_helpers.hpp"

namespace laconic::train {

StagedGradient::StagedGradient(std::vector<torch::Tensor>& params, bool staged)
    : flat_(attach_flat_gradient(params)), staged_(staged) {
  // Pinned host memory lets the copies run at the bus's speed; it needs CUDA.
  if (staged_)
    host_ = torch::zeros({flat_.numel()},
                         torch::TensorOptions().dtype(torch::kFloat).pinned_memory(flat_.device().is_cuda()));
}

std::span<float> StagedGradient::host() {
  torch::Tensor& memory = staged_ ? host_ : flat_;
  return {memory.data_ptr<float>(), static_cast<std::size_t>(memory.numel())};
}

void StagedGradient::to_host() {
  if (staged_) host_.copy_(flat_);  // blocking: the exchange reads it next
}

void StagedGradient::to_device() {
  if (staged_) flat_.copy_(host_);
}

std::vector<torch::Tensor> parameters_on(torch::nn::Module& module, const std::string& device) {
  module.to(torch::Device(device));
  return module.parameters();
}

torch::Device device_of(const torch::nn::Module& module) {
  const auto params = module.parameters();
  return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

void settle(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

torch::Tensor host_copy(const torch::Tensor& tensor) { return tensor.to(torch::kCPU).contiguous(); }

}  // namespace laconic::train
