#include "engine/train/worker_checkpoint.hpp"

#include "engine/core/error.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/worker.hpp"

namespace laconic::train {

/// Everything a worker's loop needs to continue, in the order load_checkpoint() reads it.
void save_worker_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                            const TrainingPosition& position, WorkerParts& parts, Trainer& trainer,
                            const ChurnPosition* churn) {
  write_checkpoint(path, fingerprint, rank, position, [&](StateWriter& out) {
    save_model(out, *parts.model);
    parts.optimizer->save_state(out);
    parts.compressor->save_state(out);
    parts.schedule->save_state(out);
    parts.topology->save_state(out);
    out.flag(parts.stop_rule != nullptr);
    if (parts.stop_rule) parts.stop_rule->save_state(out);
    trainer.save_state(out);
    save_torch_generator(out);
    if (churn == nullptr) return;  // only a run with churn, or an elastic one, writes (and reads) this part
    out.array(churn->members);
    out.u64(churn->data_position);
    out.i64(churn->epoch_steps_trained);
  });
}

TrainingPosition load_worker_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                                        WorkerParts& parts, Trainer& trainer, ChurnPosition* churn) {
  return read_checkpoint(path, fingerprint, rank, [&](StateReader& in, const TrainingPosition& position) {
    load_model(in, *parts.model);
    parts.optimizer->load_state(in);
    parts.compressor->load_state(in);  // told its epoch by the first advance() after
    parts.schedule->load_state(in);
    parts.topology->load_state(in);
    if (in.flag() != (parts.stop_rule != nullptr))
      throw ConfigError(str_cat("checkpoint ", path, " disagrees with the run about its stopping rule"));
    if (parts.stop_rule) parts.stop_rule->load_state(in);
    trainer.load_state(in, position.format);
    load_torch_generator(in);
    if (churn == nullptr) return;
    in.array(churn->members);
    churn->data_position = in.u64();
    churn->epoch_steps_trained = in.i64();
  });
}

}  // namespace laconic::train
