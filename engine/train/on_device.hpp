#pragma once
// The worker's tensors on the run's device (device.hpp): the flat gradient where the model is and,
// on a GPU, its copy in pinned host memory that the codecs and Gloo read and write; the wait for
// the device's queued work before a host clock is read, so that a phase's time is the device's.
#include <span>
#include <string>
#include <vector>

#include <torch/types.h>

namespace laconic::train {

/// The parameters' gradients as views of one flat tensor on their device, and the host memory an
/// exchange works on: the same memory on the CPU, a pinned buffer of its own on a GPU (or on the CPU
/// when `staged`, which takes the GPU path's copies).
class StagedGradient {
 public:
  StagedGradient() = default;
  StagedGradient(std::vector<torch::Tensor>& params, bool staged);

  /// The flat gradient on the parameters' device (their .grad() are views of it).
  torch::Tensor& on_device() { return flat_; }
  const torch::Tensor& on_device() const { return flat_; }
  /// The host memory the exchange reads and writes: to_host() before, to_device() after.
  std::span<float> host();
  /// Copies the device's gradient into host() (nothing when they are the same memory).
  void to_host();
  /// Copies host() back into the device's gradient (nothing when they are the same memory).
  void to_device();
  bool staged() const { return staged_; }

 private:
  torch::Tensor flat_, host_;
  bool staged_ = false;
};

/// Moves `module`'s parameters and buffers to `device` ("cpu", "cuda:0") and returns its parameters.
std::vector<torch::Tensor> parameters_on(torch::nn::Module& module, const std::string& device);
/// The device of `module`'s first parameter (the CPU when it has none).
torch::Device device_of(const torch::nn::Module& module);
/// Waits until the work queued on `device` is done (nothing on the CPU): a host clock read after
/// it times what the device did.
void settle(const torch::Device& device);
/// `tensor` on the CPU, contiguous (itself when it already is both): for reading its bytes.
torch::Tensor host_copy(const torch::Tensor& tensor);

}  // namespace laconic::train
