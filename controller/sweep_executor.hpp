#pragma once
// The runs of a sweep, one after another (docs/architecture.md, "How a run flows"): planned in
// the database in one transaction, then for each run that needs training: claimed, prepared
// (rewound, its host's facts, its data, its metrics' sink), launched and supervised through the
// launcher's observer, and concluded (its rows committed, then its status).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/durable_writes.hpp"
#include "controller/host_load.hpp"
#include "controller/launched_sweep.hpp"
#include "controller/launcher.hpp"
#include "controller/pending_writes.hpp"
#include "controller/progress.hpp"
#include "controller/run_sweep.hpp"
#include "controller/sweep_plan.hpp"
#include "engine/catalog.hpp"
#include "lua/experiment.hpp"
#include "storage/database.hpp"
#include "storage/journal.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"

namespace laconic::controller {

/// Rows the controller keeps in memory while the database cannot take them (40 bytes each, so
/// about 80 MB); past it, it stops reading the workers' pipes and they wait.
inline constexpr std::size_t kMaxPendingRows = 2'000'000;

/// Runs planned runs one after another, recording each; counts what happened.
class SweepExecutor {
 public:
  /// `sweep`: the other ranks, when a launcher started this process as rank 0; else null.
  /// `callbacks`: the experiment file's functions (may be null), which forked workers call.
  SweepExecutor(const SweepOptions& args, const std::atomic<bool>& stop, const lua::ExperimentPlan& plan,
                RunCallbacks* callbacks, const engine::EngineCatalog& catalog, storage::Database& db,
                storage::Recorder& recorder, std::int64_t experiment_id, LaunchedSweep* sweep);

  /// Records `runs` (filling their ids) and runs them.
  void execute(std::vector<PlannedRun>& runs);
  /// The last recorded value of `metric` of a run that finished (NaN otherwise).
  double final_metric(const PlannedRun& run, const std::string& metric);
  /// Stopped by the user, by a database that took no writes, or by a lost rank.
  bool interrupted() const { return interrupted_ || gave_up_ || rank_lost(); }
  /// Prints the sweep's count line; returns laconic run's exit status.
  int report() const;

 private:
  /// Where and whether a run's workers keep checkpoints.
  struct Checkpoints {
    std::filesystem::path dir;
    bool on = false;
  };

  void record_host_facts(std::int64_t run_id, const ResolvedRun& resolved, const std::string& label);
  void record_host_load(std::int64_t run_id, const std::string& label);

  void execute_one(const PlannedRun& run, std::size_t total);
  void execute_claimed(const PlannedRun& run, const RunConfig& config, RunWrites& pending);
  Checkpoints prepare(const PlannedRun& run, const RunConfig& config, const ResolvedRun& resolved, RunWrites& pending);
  LaunchOutcome launch(const PlannedRun& run, const RunConfig& config, const ResolvedRun& resolved,
                       const Checkpoints& checkpoints, RunWrites& pending);
  WorkerArgs worker_args(const PlannedRun& run, const RunConfig& config, const ResolvedRun& resolved,
                         const Checkpoints& checkpoints) const;
  LaunchObserver observe(const Checkpoints& checkpoints, RunWrites& pending);
  void conclude(const LaunchOutcome& outcome, RunWrites& pending);

  // The database's side (sweep_writes.cpp): claims, what waits for a locked database, the journal.
  bool claim(const PlannedRun& run, RunWrites& pending);
  bool skip_taken(const PlannedRun& run, const std::string& label);
  /// One attempt at the writes that wait (the deferred runs, then `current`'s); a database that
  /// cannot take them starts (or continues) an outage, which stop_reason() measures.
  void write_now(RunWrites& current);
  /// A write that failed for now (`what`: "start run 3"): remembered for the give-up message,
  /// and the outage starts (or goes on).
  void write_failed(const std::string& what, const StorageError& e);
  /// Writes the deferred runs (one attempt), printing each as it lands; throws a transient
  /// StorageError at the first that cannot.
  void write_deferred();
  /// At the sweep's end: the deferred runs written, retried within --db-retry (then a journal).
  void finish_deferred();
  /// Why the run must stop for the database ("" for no reason): a claim another controller
  /// won, or an outage longer than --db-retry.
  std::string stop_reason(const RunWrites& current) const;
  void count(storage::RunStatus status);
  /// "FINISHED  test accuracy 0.8123  sent 1.2 MB (dense 4.8 MB)  12.3 s", from the database.
  std::string result_line(std::int64_t run_id) const;
  void report_lost(const RunWrites& run);

  bool rank_lost() const { return sweep_ && !sweep_->remote().lost.empty(); }
  void give_up(const std::string& why, RunWrites& current);

  const SweepOptions& args_;
  const std::atomic<bool>& stop_;
  const lua::ExperimentPlan& plan_;
  RunCallbacks* callbacks_;
  const engine::EngineCatalog& catalog_;
  storage::Database& db_;
  storage::Recorder& recorder_;
  std::int64_t experiment_id_;
  LaunchedSweep* sweep_;
  Progress progress_;
  int finished_ = 0, failed_ = 0, skipped_ = 0, diverged_ = 0;
  std::size_t position_ = 0, offset_ = 0;
  bool interrupted_ = false;
  int left_queued_ = 0;  ///< runs not started after an interruption that the database would not mark KILLED
  int not_started_for_lost_rank_ = 0;  ///< runs left QUEUED because a launched rank was gone
  bool gave_up_ = false;
  DurableWrites writes_;
  PendingWrites pending_writes_;
  std::string last_write_error_;  // SQLite's words for the last write that failed
  int last_write_error_code_ = 0;
  int ranks_here_ = 1;        // the run's ranks on this host (with --jobs, every job's)
  CpuSample cpu_at_start_{};  // when the run's host facts were recorded
};

}  // namespace laconic::controller
