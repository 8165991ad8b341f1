#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/train/optim/optimizer.hpp"

namespace laconic::train {

struct DemoOptions {
  StepValue lr = 1e-3;
  std::int64_t chunk = 64;
  std::int64_t topk = 32;
  double decay = 0.999;
  double weight_decay = 0;

  static OptionFields<DemoOptions> fields();
};

/// DeMo, decoupled momentum (Peng, Quesnelle, Kingma 2024, arXiv 2411.19870), as its demo.py
/// steps: each worker keeps a momentum delta = decay delta + lr g, sends each chunk's `topk`
/// largest DCT coefficients of it (compress::DemoCodec, which keeps the rest in delta), and
/// every worker steps p = p (1 - lr weight_decay) - lr sign(m) with m the workers' decoded mean
/// of what they sent. The exchange is its own: the run exchanges updates (compute_update: lr g,
/// the codec's momentum and extraction, the topology's gather; apply_exchanged: the sign step),
/// its compressor must be none(), its topology gather (allreduce or allgather), its schedule
/// synchronous.
class Demo : public Optimizer {
 public:
  explicit Demo(DemoOptions options) : Optimizer(options.lr), options_(options) {}
  std::string name() const override { return "demo"; }
  /// Without an exchange (one worker's own step): the sign step on its own momentum's extract is
  /// the exchange's business; step() is not used. InvariantError.
  void step(std::vector<torch::Tensor>& params) override;
  /// .grad() becomes lr x .grad(): what DeMo adds to its momentum.
  void compute_update(std::vector<torch::Tensor>& params) override;
  /// p = p (1 - lr weight_decay) - lr sign(.grad()), .grad() the decoded mean.
  void apply_exchanged(std::vector<torch::Tensor>& params) override;
  bool brings_codec() const override { return true; }
  std::unique_ptr<compress::Compressor> own_codec() const override;

 private:
  DemoOptions options_;
};

}  // namespace laconic::train
