#pragma once
// An optimizer's per-parameter tensors (momentum, moments) written to a checkpoint and read back
// bit for bit: count, then each tensor's sizes and float32 values.
#include <cmath>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "engine/core/state_io.hpp"

namespace laconic::train {

inline void save_tensors(StateWriter& out, const std::vector<torch::Tensor>& tensors) {
  out.u64(tensors.size());
  for (const auto& tensor : tensors) {
    const auto c = tensor.to(torch::kCPU).contiguous();
    out.array(c.sizes().vec());
    out.array(std::span<const float>(c.data_ptr<float>(), static_cast<std::size_t>(c.numel())));
  }
}

/// Replaces `tensors` by the ones save_tensors() wrote.
inline void load_tensors(StateReader& in, std::vector<torch::Tensor>& tensors) {
  const std::uint64_t count = in.u64();
  tensors.clear();
  std::vector<std::int64_t> sizes;
  std::vector<float> values;
  for (std::uint64_t i = 0; i < count; ++i) {
    in.array(sizes);
    in.array(values);
    auto flat = torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kFloat);
    tensors.push_back(flat.reshape(sizes).clone());
  }
}

/// Moves an optimizer's per-parameter `state` to the parameters' device when it is elsewhere (as
/// load_tensors leaves it on the CPU for a run on a GPU).
inline void follow_device(std::vector<torch::Tensor>& state, const std::vector<torch::Tensor>& params) {
  if (state.empty() || params.empty() || state.front().device() == params.front().device()) return;
  for (auto& tensor : state) tensor = tensor.to(params.front().device());
}

/// The state Adam, AdamW and LAMB share: the step count and the first and second moments of
/// every parameter, kept in checkpoints.
struct AdamMoments {
  std::int64_t steps = 0;
  std::vector<torch::Tensor> m, v;

  /// Makes the moments on the first step, and counts the step.
  void start(const std::vector<torch::Tensor>& params) {
    if (m.empty())
      for (const auto& p : params) {
        m.push_back(torch::zeros_like(p));
        v.push_back(torch::zeros_like(p));
      }
    follow_device(m, params);
    follow_device(v, params);
    ++steps;
  }
  /// m_i = beta1 m_i + (1 - beta1) g and v_i = beta2 v_i + (1 - beta2) g^2; returns the bias
  /// corrections 1 - beta1^t and 1 - beta2^t of this step t.
  std::pair<double, double> advance(std::size_t i, const torch::Tensor& g, double beta1, double beta2) {
    m[i].mul_(beta1).add_(g, 1 - beta1);
    v[i].mul_(beta2).addcmul_(g, g, 1 - beta2);
    const double t = static_cast<double>(steps);
    return {1 - std::pow(beta1, t), 1 - std::pow(beta2, t)};
  }
  /// m, then v: tensors sharing their memory.
  std::vector<torch::Tensor> tensors() const {
    std::vector<torch::Tensor> all = m;
    all.insert(all.end(), v.begin(), v.end());
    return all;
  }
  void save(StateWriter& out) const {
    out.i64(steps);
    save_tensors(out, m);
    save_tensors(out, v);
  }
  void load(StateReader& in) {
    steps = in.i64();
    load_tensors(in, m);
    load_tensors(in, v);
  }
};

}  // namespace laconic::train
