#pragma once
// 1-bit Adam's exchange (Tang et al., ICML 2021; DeepSpeed's OnebitAdam): the codec the
// `onebit_adam` optimizer brings (engine/train/optim/onebit_adam.hpp), not a compressor of its own
// in the registry.
#include <cstdint>
#include <vector>

#include "engine/compress/compressor.hpp"

namespace laconic::compress {

/// Two phases, switched by the step advance() tells it. In the warm-up (steps 0 to warmup_steps - 1)
/// the payload is the gradient in fp32, summable: the topology allreduces it as DDP would. After
/// it, what it compresses is each worker's momentum: per layer, with the worker's error e of the
/// steps before, b = m + e is sent as one fp32 scale s = ||b||_2 / sqrt(n) and a sign bit per
/// element (set when b < 0; 0 counts as +, as DeepSpeed's sign().add_(1)), and e = b - s sign(b)
/// stays. Payload per layer: float32 s, then ceil(n / 8) bytes of sign bits (element i at byte
/// i / 8, bit i % 8, least significant first). Those payloads are gathered and aggregate() takes
/// their mean: the momentum every worker then steps with. DeepSpeed's compressed allreduce
/// averages each chunk on a worker and compresses it again on its way back (a server error);
/// laconic gathers the workers' payloads and averages them exactly, so its bytes are an
/// allgather's (each worker receives the others' payloads) and it has no server error.
class OnebitAdamCodec : public Compressor {
 public:
  explicit OnebitAdamCodec(std::int64_t warmup_steps) : warmup_steps_(warmup_steps) {}

  std::string name() const override { return "onebit_adam"; }
  /// Summable (an fp32 allreduce) in the warm-up, gathered after it; a size fixed by the phase.
  Capabilities capabilities() const override { return {.summable = !frozen_, .fixed_size = true}; }
  void set_layer_shapes(const std::vector<LayerShape>& shapes) override;
  void compress(std::span<const float> values, Payload& payload) override;
  void decompress_add(const Payload& payload, std::span<float> dense) const override;
  void save_state(StateWriter& out) const override { out.array(error_); }
  void load_state(StateReader& in) override { in.array_exact(std::span<float>(error_)); }

  /// Whether the warm-up is over: the payloads are 1-bit momenta.
  bool frozen() const { return frozen_; }
  /// Bytes of every payload of the current phase: 4 per element in the warm-up, else per layer
  /// 4 + ceil(n / 8).
  std::size_t payload_size() const;
  /// The worker's error: what its 1-bit payloads have not sent yet, flat over the layers.
  std::span<const float> error() const { return error_; }

 protected:
  void on_step(const StepPoint& point) override { frozen_ = point.step >= warmup_steps_; }

 private:
  std::int64_t warmup_steps_;
  bool frozen_ = false;
  std::vector<std::size_t> layer_sizes_;
  std::vector<float> error_;
};

}  // namespace laconic::compress
