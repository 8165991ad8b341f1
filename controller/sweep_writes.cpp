// SweepExecutor's side of the database: claiming runs, what waits while another process holds
// the database's lock, and the recovery journal when it never takes writes again.
#include <cmath>
#include <iostream>

#include "controller/sweep_executor.hpp"
#include "reports/format.hpp"
#include "storage/queries.hpp"

namespace laconic::controller {

std::string SweepExecutor::result_line(std::int64_t run_id) const {
  auto row = storage::find_run(db_, run_id);
  if (!row) return "";
  std::string line = storage::to_string(row->status);
  if (!std::isnan(row->final_test_perplexity))  // a language model: judged by perplexity
    line += "  perplexity " + reports::fixed(row->final_test_perplexity, 2);
  else if (!std::isnan(row->final_test_accuracy))
    line += "  test accuracy " + reports::fixed(row->final_test_accuracy, 4);
  line += "  sent " + reports::human_bytes(row->bytes_sent) + " (dense " + reports::human_bytes(row->bytes_dense) +
          ")  " + reports::human_seconds(row->wall_time);
  if (!row->error.empty()) line += "\n    " + row->error;
  return line;
}

// Claimed as it was planned: a second controller on the same database may have taken it
// (RUNNING) or trained it (FINISHED, FAILED, ...) since; then it is skipped. While another
// process holds the database's lock, the run trains meanwhile and its claim is written later.
bool SweepExecutor::claim(const PlannedRun& run, RunWrites& pending) {
  if (pending_writes_.claimed_elsewhere(run.id)) return skip_taken(run, pending.label);
  bool claimed = false;
  try {
    claimed = recorder_.start_run(run.id, run.attempts);
  } catch (const StorageError& e) {
    if (!storage::is_transient(e)) throw;
    if (!storage::is_lock(e)) {  // a full disk, a read-only file: wait for it, or give up
      writes_.retry(str_cat("start run ", run.id), [&] { claimed = recorder_.start_run(run.id, run.attempts); });
      return claimed || skip_taken(run, pending.label);
    }
    write_failed(str_cat("start run ", run.id), e);
    if (!pending_writes_.claim_later(pending, run.attempts)) return skip_taken(run, pending.label);
    std::cout << pending.label << ": database " << args_.db << " is locked by another process; training run " << run.id
              << " meanwhile: its claim and rows are written when the lock ends" << std::endl;
    return true;
  }
  return claimed || skip_taken(run, pending.label);
}

bool SweepExecutor::skip_taken(const PlannedRun& run, const std::string& label) {
  const auto now = storage::find_run(db_, run.id);
  std::cout << label << ": run " << run.id << " was taken by another controller since it was planned (now "
            << (now ? now->status_label() : std::string("gone")) << "), skipped" << std::endl;
  ++skipped_;
  return false;
}

void SweepExecutor::write_now(RunWrites& current) {
  // Only a write that went through says the database takes writes again.
  const bool writes = pending_writes_.any_deferred() || current.claim || current.rewind_to ||
                      (current.stored && current.stored->pending() > 0) || writes_.facts_waiting() ||
                      (current.concluded && current.ending);
  try {
    write_deferred();
    pending_writes_.write(current);
    if (writes) writes_.outage_over();
  } catch (const StorageError& e) {
    if (!storage::is_transient(e)) throw;
    write_failed(str_cat("write run ", current.run_id), e);
  }
}

void SweepExecutor::write_failed(const std::string& what, const StorageError& e) {
  last_write_error_ = e.what();
  last_write_error_code_ = e.code();
  writes_.outage_started(what, e.what());
}

void SweepExecutor::write_deferred() {
  pending_writes_.write_deferred([this](const RunWrites& run) {
    progress_.clear();  // a line of its own, not across a run's live progress line
    if (run.lost) return report_lost(run);
    const auto row = storage::find_run(db_, run.run_id);
    if (row) count(row->status);
    std::cout << run.label << ": written now that the database takes writes: " << result_line(run.run_id) << std::endl;
  });
}

void SweepExecutor::finish_deferred() {
  if (!pending_writes_.any_deferred() || gave_up_) return;
  try {
    writes_.retry("write the runs that ended while it took no writes", [this] { write_deferred(); });
  } catch (const GaveUpOnDatabase& e) {
    RunWrites none;
    give_up(e.what(), none);
  }
}

std::string SweepExecutor::stop_reason(const RunWrites& current) const {
  if (current.lost)
    return str_cat("run ", current.run_id, " was claimed by another controller while the database was locked");
  const double outage = std::max(current.stored ? current.stored->outage_seconds() : 0.0, writes_.outage_seconds());
  if (outage <= args_.db_retry) return "";
  const bool from_sink = current.stored && current.stored->outage_seconds() > 0;
  return str_cat(
      "database ", args_.db, " took no writes for ", static_cast<long>(args_.db_retry), " s (--db-retry): ",
      storage::explain_storage_error(from_sink ? current.stored->last_error_code() : last_write_error_code_,
                                     from_sink ? current.stored->last_error() : last_write_error_, args_.db));
}

void SweepExecutor::count(storage::RunStatus status) {
  switch (status) {
    case storage::RunStatus::Finished:
      ++finished_;
      break;
    case storage::RunStatus::Diverged:
      ++diverged_;
      break;
    case storage::RunStatus::Killed:
      interrupted_ = true;
      break;
    default:
      ++failed_;
      break;
  }
}

void SweepExecutor::report_lost(const RunWrites& run) {
  ++skipped_;
  std::cout << run.label << ": run " << run.run_id
            << " was claimed by another controller while the database was locked, before this one's claim was "
               "written: what this one trained of it is discarded, skipped"
            << std::endl;
}

// Writes what is pending (the deferred runs' and `current`'s rows, facts and endings) to a
// recovery journal and stops the sweep. A run whose claim was never written keeps nothing: it
// stays QUEUED (or as another controller left it) and --resume trains it.
void SweepExecutor::give_up(const std::string& why, RunWrites& current) {
  gave_up_ = true;
  progress_.clear();
  std::cerr << "laconic: " << why << "\n";
  std::vector<storage::SqliteSink*> sinks;
  std::vector<storage::Journal::Status> statuses;
  std::size_t rows = 0, unclaimed_rows = 0;
  std::string endings, unclaimed;
  int unclaimed_runs = 0;
  const auto collect = [&](RunWrites& run) {
    if (run.lost) return;
    // A claim never written, or written with the rewind it needs not yet done: its rows would
    // land on rows it replaces. It is started again by --resume.
    if (run.claim || run.rewind_to) {
      if (!run.stored && !run.claim) return;
      unclaimed_rows += pending_writes_.drop_unclaimed(run);
      unclaimed += str_cat(unclaimed.empty() ? "" : ", ", run.run_id);
      ++unclaimed_runs;
      return;
    }
    if (run.stored) {
      rows += run.stored->pending();
      sinks.push_back(run.stored.get());
    }
    if (run.ending) {  // a run never started stays QUEUED
      statuses.push_back(*run.ending);
      endings += str_cat(", run ", run.run_id, " ending ", run.ending->status);
    }
  };
  for (RunWrites& run : pending_writes_.deferred()) collect(run);
  collect(current);
  const std::string path = writes_.write_journal(sinks, statuses);
  pending_writes_.deferred().clear();
  if (unclaimed_runs > 0) {
    const bool one = unclaimed_runs == 1;
    std::cerr << "laconic: " << (one ? "run " : "runs ") << unclaimed << " trained while the database was locked and "
              << (one ? "its claim was" : "their claims were") << " never written: " << (one ? "its " : "their ")
              << unclaimed_rows << " metric rows are not kept; `" << resume_command(args_) << "` trains "
              << (one ? "it" : "them") << " again" << std::endl;
  }
  if (path.empty()) {
    std::cerr << "laconic: nothing was pending, nothing is lost. Stopping the sweep: runs not started stay "
                 "QUEUED; `"
              << resume_command(args_) << "` continues once the database takes writes" << std::endl;
    return;
  }
  std::cerr << "laconic: wrote what the database could not take (" << rows << " metric rows" << endings << ")"
            << " to the recovery journal " << path << "; once the database takes writes again, replay it with "
            << "`laconic recover " << path << "` (or `" << resume_command(args_)
            << "`, which replays it first). Stopping the sweep: runs not started stay QUEUED." << std::endl;
}

}  // namespace laconic::controller
