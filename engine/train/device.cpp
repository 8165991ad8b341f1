#include "engine/train/device.hpp"

#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "engine/core/error.hpp"

namespace laconic::train {

namespace {

// CUDA's answer in a child process, as its exit status (at most 200 GPUs).
std::int64_t gpus_seen_by_a_child() {
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    std::int64_t count = 0;
    try {
      count = static_cast<std::int64_t>(torch::cuda::device_count());
    } catch (...) {}
    ::_exit(static_cast<int>(std::min<std::int64_t>(count, 200)));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      throw Error("asking CUDA how many GPUs it sees took over 120 s (a child process of laconic's hung in it)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

}  // namespace

std::int64_t gpus_seen() {
  static const std::int64_t count = [] {
    const std::int64_t asked = gpus_seen_by_a_child();
    return asked >= 0 ? asked : static_cast<std::int64_t>(torch::cuda::device_count());
  }();
  return count;
}

std::string torch_cuda_text() {
  if (gpus_seen() == 0) return "this LibTorch has no CUDA or sees no GPU (laconic --version)";
  return str_cat("this LibTorch has CUDA and sees ", gpus_seen(), " GPU(s)");
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
  if (gpus_seen() == 0)
    throw ConfigError(str_cat("device = cuda() needs a LibTorch built with CUDA that sees a GPU: ", torch_cuda_text(),
                              ". Build laconic against PyTorch's LibTorch (docs/hardware.md, \"Where a run trains\"), "
                              "or use device = cpu() or auto()"));
  const std::int64_t visible = gpus_seen();
  if (options_.index >= visible)
    throw ConfigError(
        str_cat("cuda.index = ", options_.index, ", but ", torch_cuda_text(), " (indices 0 to ", visible - 1, ")"));
  return str_cat("cuda:", options_.index);
}

std::string AutoDevice::where() const { return gpus_seen() > 0 ? "cuda:0" : "cpu"; }

Registry<Device> builtin_devices() {
  Registry<Device> r("device");
  r.add<CpuDevice, CpuOptions>("cpu", "train on the CPU (the default)");
  r.add<CudaDevice, CudaOptions>(
      "cuda", "train on a GPU: needs a LibTorch with CUDA (docs/hardware.md); codecs run on the CPU, staged");
  r.add<AutoDevice, AutoOptions>("auto", "GPU 0 where this LibTorch has CUDA and sees a GPU, else the CPU");
  return r;
}

}  // namespace laconic::train
