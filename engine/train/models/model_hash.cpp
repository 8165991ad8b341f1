#include "engine/train/models/model_hash.hpp"

#include "engine/core/hash.hpp"

namespace laconic::train {
namespace {

void add_tensor(Fnv1a& hash, const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kCPU).contiguous();
  hash.add(c.data_ptr(), static_cast<std::size_t>(c.numel()) * c.element_size());
}

}  // namespace

std::uint64_t model_hash(Model& model, HashedState what) {
  Fnv1a hash;
  for (const auto& p : model.parameters()) add_tensor(hash, p);
  if (what == HashedState::ParametersAndBuffers)
    for (const auto& b : model.buffers()) add_tensor(hash, b);
  return hash.value();
}

}  // namespace laconic::train
