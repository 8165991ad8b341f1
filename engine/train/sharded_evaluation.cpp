#include "engine/train/sharded_evaluation.hpp"

#include <cstring>

#include "engine/core/metric_keys.hpp"

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

// Worker 0 asks every worker for its replica's hash and tells them all whether they agree.
bool replicas_agree(Model& model, comm::Communicator& comm, int workers) {
  const std::uint64_t mine = model_hash(model, HashedState::ParametersAndBuffers);
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

Evaluation evaluate_across(Model& model, const DataSplit& split, std::int64_t limit, comm::Communicator& comm,
                           int workers, bool shared, const std::function<void()>& on_batch, bool* sharded,
                           double bytes_per_token) {
  const bool language_model = split.labels.dim() == 2;
  const std::int64_t n = evaluated_examples(split, limit);
  const bool split_up = shared && workers > 1 && replicas_agree(model, comm, workers);
  if (sharded) *sharded = split_up;
  if (!split_up) {
    if (comm.rank() != 0) return {};
    return evaluation_of(evaluate_sums(model, split, 0, n, on_batch), language_model, bytes_per_token);
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
  return evaluation_of(sums, language_model, bytes_per_token);
}

Evaluation evaluate_and_record(Model& model, Dataset& dataset, const RunConfig& config, MetricsSink& sink,
                               comm::Communicator& comm, bool shared, std::int64_t step, std::int64_t epoch,
                               double wall, Liveness& liveness) {
  liveness.enter("evaluating");
  const Evaluation e = evaluate_across(
      model, dataset.evaluation(), config.eval_limit, comm, static_cast<int>(config.workers), shared,
      [&liveness] { liveness.tick(); }, nullptr, dataset.bytes_per_token());
  liveness.enter("training");
  if (comm.rank() != 0) return e;
  sink.record({keys::kTestAccuracy, step, epoch, 0, wall, e.accuracy});
  sink.record({keys::kTestLoss, step, epoch, 0, wall, e.loss});
  if (e.perplexity) sink.record({keys::kTestPerplexity, step, epoch, 0, wall, *e.perplexity});
  if (e.bits_per_byte) sink.record({keys::kTestBitsPerByte, step, epoch, 0, wall, *e.bits_per_byte});
  return e;
}

}  // namespace laconic::train
