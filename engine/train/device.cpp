#include "engine/train/device.hpp"

#include <torch/cuda.h>

#include "engine/core/error.hpp"

namespace laconic::train {

std::string torch_cuda_text() {
  if (!torch::cuda::is_available()) return "this LibTorch has no CUDA or sees no GPU (laconic --version)";
  return str_cat("this LibTorch has CUDA and sees ", torch::cuda::device_count(), " GPU(s)");
}

OptionFields<CpuOptions> CpuOptions::fields() {
  return OptionFields<CpuOptions>().flag("staged", &CpuOptions::staged,
                                         "stage the gradient through a host buffer of its own, as a GPU run does (the "
                                         "GPU path's copies, tested on a CPU)");
}

OptionFields<CudaOptions> CudaOptions::fields() {
  return OptionFields<CudaOptions>().integer("index", &CudaOptions::index, "which GPU, from 0; every rank trains on it",
                                             at_least(0));
}

std::string CudaDevice::where() const {
  if (!torch::cuda::is_available())
    throw ConfigError(str_cat("device = cuda() needs a LibTorch built with CUDA that sees a GPU: ", torch_cuda_text(),
                              ". Build laconic against PyTorch's LibTorch (docs/hardware.md, \"Where a run trains\"), "
                              "or use device = cpu() or auto()"));
  const auto visible = static_cast<std::int64_t>(torch::cuda::device_count());
  if (options_.index >= visible)
    throw ConfigError(
        str_cat("cuda.index = ", options_.index, ", but ", torch_cuda_text(), " (indices 0 to ", visible - 1, ")"));
  return str_cat("cuda:", options_.index);
}

std::string AutoDevice::where() const { return torch::cuda::is_available() ? "cuda:0" : "cpu"; }

Registry<Device> builtin_devices() {
  Registry<Device> r("device");
  r.add<CpuDevice, CpuOptions>("cpu", "train on the CPU (the default)");
  r.add<CudaDevice, CudaOptions>(
      "cuda", "train on a GPU: needs a LibTorch with CUDA (docs/hardware.md); codecs run on the CPU, staged");
  r.add<AutoDevice, AutoOptions>("auto", "GPU 0 where this LibTorch has CUDA and sees a GPU, else the CPU");
  return r;
}

}  // namespace laconic::train
