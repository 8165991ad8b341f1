#pragma once
// A worker's checkpoint: everything its loop needs to continue (engine/train/checkpoint.hpp holds
// the file format), in the order load_worker_checkpoint() reads it.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/train/checkpoint.hpp"

namespace laconic::train {

struct WorkerParts;  // worker.hpp
class Trainer;       // trainer.hpp

/// With churn or in an elastic run, what a checkpoint keeps beside the rest: the workers present
/// (churn: the script's changes held back by a schedule's round), where this worker stands in its
/// shard (a worker away keeps its place, not the step's) and the steps of the epoch it trained
/// (its epoch_train_loss is their mean).
struct ChurnPosition {
  std::vector<std::int64_t> members;
  std::uint64_t data_position = 0;
  std::int64_t epoch_steps_trained = 0;  // of the epoch's steps before the checkpoint
};

/// Writes the worker's checkpoint at `path`; `churn` only with churn or in an elastic run.
void save_worker_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                            const TrainingPosition& position, WorkerParts& parts, Trainer& trainer,
                            const ChurnPosition* churn);
/// Reads one back into the parts and the trainer (and `churn`, only where it was written); its position.
TrainingPosition load_worker_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                                        WorkerParts& parts, Trainer& trainer, ChurnPosition* churn);

}  // namespace laconic::train
