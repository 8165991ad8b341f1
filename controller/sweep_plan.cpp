#include "controller/sweep_plan.hpp"

#include <unistd.h>

#include "engine/core/error.hpp"
#include "engine/train/checkpoint_files.hpp"
#include "storage/queries.hpp"

namespace laconic::controller {
namespace {

bool has_checkpoints(const std::filesystem::path& dir, std::int64_t step, int world) {
  for (int rank = 0; rank < world; ++rank)
    if (!std::filesystem::exists(train::checkpoint_path(dir.string(), rank, step))) return false;
  return true;
}

}  // namespace

std::filesystem::path checkpoint_dir(const std::string& db, std::int64_t run_id) {
  return std::filesystem::path(db + ".checkpoints") / str_cat("run-", run_id);
}

void SweepPlanner::record(std::vector<PlannedRun>& runs) {
  storage::Transaction transaction(db_.handle());
  for (PlannedRun& run : runs) {
    run = PlannedRun{run.index, run.recorded};  // a retried plan starts over
    if (args_.resume)
      find_previous(run);
    else
      refuse_if_planned_elsewhere(run);
    // A fresh run gets a row; a QUEUED one that never started keeps its own.
    if (run.start == PlannedRun::Start::Fresh && run.id < 0) run.id = recorder_.add_run(experiment_id_, run.recorded);
  }
  transaction.commit();
}

void SweepPlanner::refuse_if_planned_elsewhere(const PlannedRun& run) {
  const auto id = recorder_.find_unfinished(plan_.name, run.recorded);
  if (!id) return;
  const auto row = storage::find_run(db_, *id);
  const bool in_flight = row->status == storage::RunStatus::Queued || row->status == storage::RunStatus::Running;
  if (!in_flight || !storage::controller_alive(*row) || row->controller_pid == ::getpid()) return;
  throw ConfigError(str_cat("run '", run.recorded.name, "' of experiment '", plan_.name,
                            "' is already planned by the controller ", row->controller_pid, " on ", row->host, " (run ",
                            row->id, ", ", row->status_label(),
                            "): two `laconic run`s of one experiment at once would train it twice; wait for it, or "
                            "add --resume to share its plan (each run is then trained by whichever claims it "
                            "first)"));
}

/// With --resume: what the database already holds of this run decides whether it is done,
/// continues from a checkpoint, or runs again.
void SweepPlanner::find_previous(PlannedRun& run) {
  const auto skip = [&run](std::int64_t id, std::string as) {
    run.start = PlannedRun::Start::Skip;
    run.id = id;
    run.skipped_as = std::move(as);
  };
  if (const auto finished = recorder_.find_finished(plan_.name, run.recorded)) return skip(*finished, "finished");
  const auto id = recorder_.find_unfinished(plan_.name, run.recorded);
  if (!id) return;
  const auto row = storage::find_run(db_, *id);
  // A result: running it again would diverge again.
  if (row->status == storage::RunStatus::Diverged) return skip(*id, "diverged");
  if (row->status == storage::RunStatus::Running && !row->stale)
    return skip(*id, str_cat("running under controller ", row->controller_pid, " on ", row->host));
  // Inside the plan's transaction, which the caller retries as a whole.
  if (row->status == storage::RunStatus::Running)
    recorder_.finish_run(*id, storage::RunStatus::Failed, "its controller stopped without ending it (stale heartbeat)");
  // Continued in place, never duplicated: from its newest complete checkpoint, else from the
  // start (its rows are cleared first). Its id stays, attempts counts the tries.
  run.id = *id;
  run.attempts = row->attempts;
  const int world = catalog_.world_size(plan_.runs[run.index]);
  if (row->checkpoint_step && has_checkpoints(checkpoint_dir(args_.db, *id), *row->checkpoint_step, world)) {
    run.start = PlannedRun::Start::Resume;
    run.resume_step = *row->checkpoint_step;
  } else if (row->status != storage::RunStatus::Queued || row->attempts > 0) {
    run.start = PlannedRun::Start::Again;
  }
}

}  // namespace laconic::controller
