#pragma once
// An optimizer's per-parameter tensors (momentum, moments) written to a checkpoint and read back
// bit for bit: count, then each tensor's sizes and float32 values.
#include <vector>

#include <torch/torch.h>

#include "engine/core/state_io.hpp"

namespace laconic::train {

inline void save_tensors(StateWriter& out, const std::vector<torch::Tensor>& tensors) {
  out.u64(tensors.size());
  for (const auto& tensor : tensors) {
    const auto c = tensor.contiguous();
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

}  // namespace laconic::train
