#include "controller/pending_writes.hpp"

#include <filesystem>

#include "controller/sweep_plan.hpp"
#include "storage/queries.hpp"

namespace laconic::controller {

PendingWrites::PendingWrites(storage::Database& db, storage::Recorder& recorder, DurableWrites& writes,
                             const std::string& database)
    : db_(db), recorder_(recorder), writes_(writes), database_(database), locks_(database) {}

bool PendingWrites::claim_later(RunWrites& run, std::int64_t attempts) {
  if (!locks_.hold(run.run_id)) return false;
  // Readers are not stopped by a writer's lock (the database is in WAL mode).
  const auto row = storage::find_run(db_, run.run_id);
  const bool free = row && row->attempts == attempts &&
                    (row->status == storage::RunStatus::Queued || row->status == storage::RunStatus::Failed ||
                     row->status == storage::RunStatus::Killed);
  if (!free) {
    locks_.release(run.run_id);
    return false;
  }
  run.claim = RunWrites::Claim{attempts, storage::unix_now()};
  writes_.hold_facts(run.run_id);
  return true;
}

bool PendingWrites::write_claim(RunWrites& run) {
  if (!recorder_.start_run(run.run_id, run.claim->attempts, run.claim->started)) {
    drop_unclaimed(run);
    run.lost = true;
    return false;
  }
  run.claim.reset();
  if (run.stored) run.stored->hold(false);
  writes_.release_facts(run.run_id);
  locks_.release(run.run_id);  // the database's claim keeps the others off it now
  return true;
}

bool PendingWrites::write(RunWrites& run) {
  if (run.lost) return false;
  if (run.claim && !write_claim(run)) return false;
  if (run.rewind_to) {
    recorder_.rewind_run(run.run_id, *run.rewind_to);
    run.rewind_to.reset();
  }
  if (run.stored) {
    run.stored->flush();
    // After its end nothing more arrives: rows left mean the commit failed.
    if (run.stored->outage_seconds() > 0 || (run.concluded && run.stored->pending() > 0))
      throw StorageError(run.stored->last_error(), run.stored->last_error_code());
  }
  writes_.flush_facts_or_throw();
  if (!run.concluded || !run.ending) return true;
  const storage::RunStatus status = storage::run_status_from_string(run.ending->status);
  recorder_.finish_run(run.run_id, status, run.ending->error, run.ending->ended);
  if (status == storage::RunStatus::Finished || status == storage::RunStatus::Diverged) {
    // Both are results: --resume skips them, so their checkpoints will never be used.
    std::error_code ignored;
    std::filesystem::remove_all(checkpoint_dir(database_, run.run_id), ignored);
  }
  run.ending.reset();
  return true;
}

void PendingWrites::write_deferred(const std::function<void(const RunWrites&)>& on_written) {
  while (!deferred_.empty()) {
    RunWrites& run = deferred_.front();
    write(run);
    on_written(run);
    deferred_.pop_front();
  }
}

std::size_t PendingWrites::rows_kept() const {
  std::size_t rows = 0;
  for (const RunWrites& run : deferred_) rows += run.stored ? run.stored->pending() : 0;
  return rows;
}

std::size_t PendingWrites::drop_unclaimed(RunWrites& run) {
  const std::size_t rows = run.stored ? run.stored->take_pending().size() : 0;
  writes_.drop_facts(run.run_id);
  locks_.release(run.run_id);
  run.claim.reset();
  run.ending.reset();
  return rows;
}

}  // namespace laconic::controller
