#pragma once
// Where a run trains: device = cpu() (the default), cuda { index } or auto() (issue 69). The
// model, the batch and the optimizer's state live on the device; the flat gradient is staged
// through (pinned) host memory for the codecs and Gloo, which run on the CPU (StagedGradient,
// on_device.hpp). cuda() needs a LibTorch built with CUDA that sees a GPU (Debian's has none:
// there it is refused with the reason); auto() takes GPU 0 where there is one, else the CPU.
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
  /// The gradient goes through a host buffer of its own between the device and the exchange, as on
  /// a GPU (cpu { staged = true } takes that path on the CPU, to test it where there is no GPU).
  virtual bool staged() const { return where() != "cpu"; }
};

/// How many GPUs this LibTorch sees (0 where it has no CUDA), asked once per process in a child
/// process: a process that initialized CUDA cannot pass it on to the workers it forks (each fails
/// with "CUDA error: initialization error", seen on an H200 node), and the controller resolves
/// `device` before it forks them. Where fork fails, asked in this process.
std::int64_t gpus_seen();

/// What this process's LibTorch can do: "built with CUDA, 1 GPU visible", "built without CUDA".
std::string torch_cuda_text();

struct CpuOptions {
  bool staged = false;
  static OptionFields<CpuOptions> fields();
};
class CpuDevice : public Device {
 public:
  explicit CpuDevice(CpuOptions options) : options_(options) {}
  std::string name() const override { return "cpu"; }
  std::string where() const override { return "cpu"; }
  bool staged() const override { return options_.staged; }

 private:
  CpuOptions options_;
};

struct CudaOptions {
  std::int64_t index = 0;
  static OptionFields<CudaOptions> fields();
};
/// Every rank of the run on GPU `index` (several ranks share one card, each process its own
/// CUDA context and stream).
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
/// GPU 0 where this LibTorch has CUDA and sees a GPU, else the CPU.
class AutoDevice : public Device {
 public:
  explicit AutoDevice(AutoOptions) {}
  std::string name() const override { return "auto"; }
  std::string where() const override;
};

Registry<Device> builtin_devices();

}  // namespace laconic::train
