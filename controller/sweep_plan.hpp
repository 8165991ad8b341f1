#pragma once
// A sweep's plan in the database: what each run of the plan needs (train it, continue it from a
// checkpoint, run it again, or skip it), decided from what the database already holds of it and
// recorded in one transaction (docs/architecture.md, "How a run flows").
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "controller/run_sweep.hpp"
#include "engine/catalog.hpp"
#include "lua/experiment.hpp"
#include "storage/database.hpp"
#include "storage/recorder.hpp"

namespace laconic::controller {

/// A run of the plan and how it starts.
struct PlannedRun {
  /// What the database held of it decides.
  enum class Start {
    Fresh,   ///< a new row
    Resume,  ///< continue run `id` from its checkpoint of resume_step
    Again,   ///< run `id` again from the start, in place (its rows cleared)
    Skip,    ///< run `id` makes it unnecessary (skipped_as says how it ended)
  };
  std::size_t index;     ///< position in the plan (what workers are told)
  RunConfig recorded;    ///< as the database records it (tuning phases rename it)
  Start start = Start::Fresh;
  std::int64_t id = -1;  ///< runs.id: its row, or (Skip) the one that makes it unnecessary
  std::string skipped_as{};        ///< Skip: how that run ended ("finished", "diverged", "running ...")
  std::int64_t resume_step = -1;   ///< Resume: the checkpoint's step
  std::int64_t attempts = 0;       ///< times run `id` had been started when planned: what its claim expects
};

/// Where run `run_id`'s workers keep their checkpoints: DB.checkpoints/run-ID.
std::filesystem::path checkpoint_dir(const std::string& db, std::int64_t run_id);

/// Decides and records the plan of one `laconic run` (or job).
class SweepPlanner {
 public:
  SweepPlanner(const SweepOptions& args, const lua::ExperimentPlan& plan, const engine::EngineCatalog& catalog,
               storage::Database& db, storage::Recorder& recorder, std::int64_t experiment_id)
      : args_(args), plan_(plan), catalog_(catalog), db_(db), recorder_(recorder), experiment_id_(experiment_id) {}

  /// Decides what each run needs and records the new ones, in one transaction: controllers that
  /// plan on one database at once take turns, so each sees the others' runs. With --resume a
  /// run another controller planned is shared (whoever claims it first trains it); without, a
  /// run that a live controller has planned or is training is refused (ConfigError): it would
  /// be trained twice.
  void record(std::vector<PlannedRun>& runs);

 private:
  void refuse_if_planned_elsewhere(const PlannedRun& run);
  void find_previous(PlannedRun& run);

  const SweepOptions& args_;
  const lua::ExperimentPlan& plan_;
  const engine::EngineCatalog& catalog_;
  storage::Database& db_;
  storage::Recorder& recorder_;
  std::int64_t experiment_id_;
};

}  // namespace laconic::controller
