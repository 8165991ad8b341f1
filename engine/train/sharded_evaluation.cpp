#include "engine/train/sharded_evaluation.hpp"

#include <cstring>

namespace laconic::train {
namespace {

template <class T>
std::span<const std::uint8_t> bytes_of(const T& value) {
  return {reinterpret_cast<const std::uint8_t*>(&value), sizeof value};
}

template <class T>
std::span<std::uint8_t> bytes_of(T& value) {
  return {reinterpret_cast<std::uint8_t*>(&value), sizeof value};
}

void hash_tensor(std::uint64_t& h, const torch::Tensor& t) {
  auto c = t.detach().contiguous();
  const auto* bytes = static_cast<const std::uint8_t*>(c.data_ptr());
  const auto n = static_cast<std::size_t>(c.numel()) * c.element_size();
  for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;  // FNV-1a
}

// Worker 0 asks every worker for its replica's hash and tells them all whether they agree.
bool replicas_agree(Model& model, comm::Communicator& comm, int workers) {
  const std::uint64_t mine = replica_hash(model);
  std::uint8_t agree = 1;
  if (comm.rank() == 0) {
    for (int r = 1; r < workers; ++r) {
      std::uint64_t theirs = 0;
      comm.send_recv(r, {}, r, bytes_of(theirs));
      if (theirs != mine) agree = 0;
    }
    for (int r = 1; r < workers; ++r) comm.send_recv(r, bytes_of(agree), r, {});
  } else {
    comm.send_recv(0, bytes_of(mine), 0, {});
    comm.send_recv(0, {}, 0, bytes_of(agree));
  }
  return agree == 1;
}

}  // namespace

std::uint64_t replica_hash(Model& model) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& p : model.parameters()) hash_tensor(h, p);
  for (const auto& b : model.buffers()) hash_tensor(h, b);
  return h;
}

Evaluation evaluate_across(Model& model, const DataSplit& split, std::int64_t limit, comm::Communicator& comm,
                           int workers, bool shared, const std::function<void()>& on_batch, bool* sharded) {
  const bool language_model = split.labels.dim() == 2;
  const std::int64_t n = evaluated_examples(split, limit);
  const bool split_up = shared && workers > 1 && replicas_agree(model, comm, workers);
  if (sharded) *sharded = split_up;
  if (!split_up) {
    if (comm.rank() != 0) return {};
    return evaluation_of(evaluate_sums(model, split, 0, n, on_batch), language_model);
  }
  // Worker r takes examples [r n / W, (r + 1) n / W).
  const std::int64_t rank = comm.rank();
  EvaluationSums sums = evaluate_sums(model, split, rank * n / workers, (rank + 1) * n / workers, on_batch);
  if (rank != 0) {
    comm.send_recv(0, bytes_of(sums), 0, {});
    return {};
  }
  for (int r = 1; r < workers; ++r) {
    EvaluationSums theirs;
    comm.send_recv(r, {}, r, bytes_of(theirs));
    sums += theirs;
  }
  return evaluation_of(sums, language_model);
}

}  // namespace laconic::train
