#pragma once
// Evaluation split across the workers: each evaluates its slice of the test split and worker 0
// adds up the sums. Only when every replica is the same model (parameters and buffers, such as
// batch-norm statistics, hash alike): then the result is worker 0's model's, as when worker 0
// evaluates alone, in 1/workers of the time. Otherwise worker 0 evaluates the whole split.
#include <cstdint>
#include <functional>

#include "engine/comm/communicator.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/metrics.hpp"
#include "engine/core/run_config.hpp"
#include "engine/train/data/dataset.hpp"
#include "engine/train/evaluate.hpp"
#include "engine/train/models/model_hash.hpp"

namespace laconic::train {

/// Evaluates the first `limit` examples of `split` (all when 0) with the workers 0..workers-1 of
/// `comm`, every one of which must call it at the same point when `shared` is true; when it is
/// false only worker 0 calls it (and evaluates alone). The Evaluation is worker 0's; the others'
/// is empty. `sharded` (may be null) is set to whether the slices were split.
Evaluation evaluate_across(Model& model, const DataSplit& split, std::int64_t limit, comm::Communicator& comm,
                           int workers, bool shared, const std::function<void()>& on_batch, bool* sharded = nullptr,
                           double bytes_per_token = 0);

/// Evaluates on the dataset's evaluation split (Dataset::evaluation: test, or a language corpus's
/// validation split) with evaluate_across and, on worker 0, records test_accuracy, test_loss (and
/// test_perplexity, test_bits_per_byte) at `step` (the last step taken) of `epoch`; `wall` is the record's wall
/// time: when the evaluated weights were ready, before the evaluation ran. Worker 0's result;
/// the others' is empty.
Evaluation evaluate_and_record(Model& model, Dataset& dataset, const RunConfig& config, MetricsSink& sink,
                               comm::Communicator& comm, bool shared, std::int64_t step, std::int64_t epoch,
                               double wall, Liveness& liveness);

}  // namespace laconic::train
