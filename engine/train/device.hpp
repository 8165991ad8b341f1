#pragma once
// Where a run trains: device = cpu() (the default), cuda { index } or auto() (issue 69). Training
// on a GPU is not built yet: cuda() is refused with the reason, on a LibTorch without CUDA (as
// Debian's) and on one with CUDA alike, and auto() trains on the CPU.
#include <cstdint>
#include <string>

#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"

namespace laconic::train {

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  /// The device the run trains on, as LibTorch names it ("cpu", "cuda:0"); ConfigError, with the
  /// reason, where the run cannot train there.
  virtual std::string where() const = 0;
};

/// What this process's LibTorch can do: "built with CUDA, 1 GPU visible", "built without CUDA".
std::string torch_cuda_text();

struct CpuOptions {
  static OptionFields<CpuOptions> fields() { return {}; }
};
class CpuDevice : public Device {
 public:
  explicit CpuDevice(CpuOptions) {}
  std::string name() const override { return "cpu"; }
  std::string where() const override { return "cpu"; }
};

struct CudaOptions {
  std::int64_t index = 0;
  static OptionFields<CudaOptions> fields();
};
class CudaDevice : public Device {
 public:
  explicit CudaDevice(CudaOptions options) : options_(options) {}
  std::string name() const override { return "cuda"; }
  std::string where() const override;

 private:
  CudaOptions options_;
};

struct AutoOptions {
  static OptionFields<AutoOptions> fields() { return {}; }
};
/// The GPU where training on one is possible, else the CPU: the CPU until GPU training is built.
class AutoDevice : public Device {
 public:
  explicit AutoDevice(AutoOptions) {}
  std::string name() const override { return "auto"; }
  std::string where() const override { return "cpu"; }
};

Registry<Device> builtin_devices();

}  // namespace laconic::train
