#include "engine/train/averaged_state.hpp"

#include <torch/torch.h>

#include "engine/core/state_io.hpp"
#include "engine/train/on_device.hpp"

namespace laconic::train {

std::vector<std::uint8_t> averaged_optimizer_state(Optimizer& optimizer, comm::Communicator& comm,
                                                   const std::vector<int>& staying) {
  comm.set_members(staying);
  std::vector<torch::Tensor> tensors = optimizer.state_tensors();
  std::vector<float> flat;
  for (const auto& t : tensors) {
    const torch::Tensor c = host_copy(t);
    flat.insert(flat.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  comm.allreduce_sum(flat);
  const float scale = 1.0f / static_cast<float>(staying.size());
  for (float& x : flat) x *= scale;
  if (comm.rank() != 0) return {};
  std::vector<std::uint8_t> own, bytes;
  StateWriter keep(own);
  optimizer.save_state(keep);
  torch::NoGradGuard no_grad;
  std::size_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(torch::from_blob(flat.data() + offset, t.sizes(), torch::kFloat));
    offset += static_cast<std::size_t>(t.numel());
  }
  StateWriter out(bytes);
  optimizer.save_state(out);
  StateReader back(own);
  optimizer.load_state(back);
  return bytes;
}

}  // namespace laconic::train
