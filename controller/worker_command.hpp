#pragma once
// One rank of one run: `laconic worker` (exec'd, or started by hand or by another launcher),
// which loads the experiment file to find its run, and the same training for a forked worker,
// which holds its run's configuration already.
#include <functional>

#include "controller/worker_args.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/core/run_config.hpp"

namespace laconic::engine {
class EngineCatalog;
}
namespace laconic::lua {
struct ExperimentPlan;
}

namespace laconic::controller {

/// The run a rank trains, and the experiment file's functions it may call (may be null).
struct RankRun {
  const RunConfig* config = nullptr;
  RunCallbacks* callbacks = nullptr;
};

/// LACONIC_ARRIVALS=stamps: ranks on one host measure their waiting as ranks on several hosts do
/// (docs/network-model.md, "Waiting across hosts"); unset, empty or `auto`: ranks on one
/// host share a board (rank 0's value decides for every rank). ConfigError for any other value.
bool stamped_arrivals_requested();

/// Trains rank `args.rank` of the run `find_run` returns (called once the rank reports to its
/// controller, so that a run it cannot find is reported like any failure). Returns the process
/// exit status: 0, 1 on failure, kDivergedExitStatus (controller/launcher.hpp) when the training loss
/// diverged.
int train_rank(const WorkerArgs& args, const engine::EngineCatalog& catalog, const std::function<RankRun()>& find_run);

/// The run `args` names (run_index, run_name) in `plan`, the worker's own expansion of the file:
/// ConfigError when the file's hash (args.file_hash, when given) or the run's name differ from
/// what the controller planned.
const RunConfig& planned_run(const WorkerArgs& args, const lua::ExperimentPlan& plan);

/// `laconic worker`: loads args.file (with args.overrides), checks its hash and the run's name
/// and world, and trains the rank (train_rank).
int worker_command(const WorkerArgs& args);

}  // namespace laconic::controller
