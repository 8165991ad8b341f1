#include "engine/train/device.hpp"

#include <torch/cuda.h>

#include "engine/core/error.hpp"

namespace laconic::train {

std::string torch_cuda_text() {
  if (!torch::cuda::is_available()) return "this LibTorch has no CUDA or sees no GPU (laconic --version)";
  return str_cat("this LibTorch has CUDA and sees ", torch::cuda::device_count(), " GPU(s)");
}

OptionFields<CudaOptions> CudaOptions::fields() {
  return OptionFields<CudaOptions>().integer("index", &CudaOptions::index, "which GPU, from 0", at_least(0));
}

std::string CudaDevice::where() const {
  throw ConfigError(str_cat("device = cuda() cannot train yet: training on a GPU is not built (issue 69); ",
                            torch_cuda_text(), ". Use device = cpu() or auto() (the CPU)"));
}

Registry<Device> builtin_devices() {
  Registry<Device> r("device");
  r.add<CpuDevice, CpuOptions>("cpu", "train on the CPU (the default)");
  r.add<CudaDevice, CudaOptions>("cuda",
                                 "train on a GPU: not built yet (issue 69), refused with the reason; docs/hardware.md");
  r.add<AutoDevice, AutoOptions>("auto", "a GPU where training on one is possible, else the CPU: the CPU for now");
  return r;
}

}  // namespace laconic::train
