#pragma once
// The single writer of a laconic database: experiments, runs and their life cycle, and the
// MetricsSink that stores a run's metrics. Only the controller (or rank 0 without one) holds it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/metrics.hpp"
#include "engine/core/run_config.hpp"
#include "storage/database.hpp"
#include "storage/run_status.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {

/// Writes through prepared statements of one read-write Database, which must outlive it.
class Recorder {
 public:
  /// StorageError if `db` was opened read-only.
  explicit Recorder(Database& db);

  /// Id of the experiment row for (name, file_hash), inserted if new. `file_hash` is the hex
  /// digest of the experiment file's bytes; `file_path` as the user gave it; `source` the file's
  /// text ("" stores NULL).
  std::int64_t add_experiment(const std::string& name, const std::string& file_path, const std::string& file_hash,
                              const std::string& source = "");
  /// Inserts a QUEUED run with config.to_json() and config.swept_json(), planned by this process
  /// (controller_pid); returns its id.
  std::int64_t add_run(std::int64_t experiment_id, const RunConfig& config);
  /// QUEUED, FAILED or KILLED -> RUNNING: heartbeat = now, started = now (the attempt's start, so
  /// that a run's wall time is its last attempt's, not the time since a killed one), ended and
  /// error cleared, attempts + 1, controller_pid = this process. The claim of a
  /// controller: with `attempts`, only while the run has been started that many times, as its
  /// plan saw it. A run RUNNING (another controller's), FINISHED or DIVERGED (a result), or
  /// started by someone else since it was planned is left alone and the result is false: two
  /// controllers on one database never train one run twice nor append to each other's rows.
  /// `started`: when the attempt began (unix seconds), for a claim written after its run began
  /// training (the database was locked); now when not given. StorageError if there is no such run.
  bool start_run(std::int64_t run_id, std::optional<std::int64_t> attempts = std::nullopt,
                 std::optional<double> started = std::nullopt);
  /// Sets heartbeat to now (unix seconds), so a reader can tell a live run from a dead one, and
  /// runs.workers_silent: how long its most silent worker has sent nothing (seconds).
  void heartbeat(std::int64_t run_id, double workers_silent = 0);
  /// Sets the final status, ended (unix seconds: `ended`, when the run ended, else now) and the
  /// error text ("" stores NULL). ConfigError if `status` is QUEUED or RUNNING.
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& error = "",
                  std::optional<double> ended = std::nullopt);
  /// Id of a FINISHED run of experiment `experiment` whose config JSON equals
  /// config.to_json().dump(), if any (the newest such run; used by `laconic run --resume`).
  std::optional<std::int64_t> find_finished(const std::string& experiment, const RunConfig& config);
  /// The newest run of experiment `experiment` whose config JSON equals config.to_json().dump()
  /// and that did not finish (QUEUED, RUNNING, FAILED, KILLED, DIVERGED), if any.
  std::optional<std::int64_t> find_unfinished(const std::string& experiment, const RunConfig& config);
  /// Records that every worker of the run holds a checkpoint to resume at `step` (the first
  /// step not yet taken), after the metrics of the steps before it were committed.
  void record_checkpoint(std::int64_t run_id, std::int64_t step);
  /// Deletes the run's metrics of steps >= `step` and rebuilds its run_summary rows from what is
  /// left, in one transaction: the state of the run when its checkpoint at `step` was taken.
  void rewind_run(std::int64_t run_id, std::int64_t step);
  /// Sets one fact about how the run ran (run_facts; a key already there is replaced):
  /// "torch_threads" = "1", "blas_library" = "/usr/lib/.../libopenblasp-r0.3.21.so", ...
  void record_fact(std::int64_t run_id, const std::string& key, const std::string& value);
  /// A sink that writes one run's metrics and its run_summary rows in batched transactions
  /// (commit every SqliteSink::kBatchRows rows, on flush(), and in its destructor, which never
  /// throws). It must not outlive the Database. StorageError if there is no run `run_id`.
  std::unique_ptr<MetricsSink> metrics_sink(std::int64_t run_id);
  /// The same with OnWriteFailure::KeepAndRetry: a transient failure keeps the rows and retries
  /// (the controller's sink; it hands what is left to a recovery journal when it gives up).
  std::unique_ptr<SqliteSink> retrying_sink(std::int64_t run_id);

 private:
  /// Runs an UPDATE of one run by id (parameter 1) and checks that it hit exactly one row.
  void update_one(Statement& statement, std::int64_t run_id, const char* what);
  /// StorageError unless run `run_id` exists.
  void require_run(std::int64_t run_id, const char* what);

  Database& db_;
  Statement insert_experiment_;
  Statement select_experiment_;
  Statement insert_run_;
  Statement start_run_;
  Statement heartbeat_;
  Statement finish_run_;
  Statement find_finished_;
  Statement find_unfinished_;
  Statement record_checkpoint_;
  Statement run_exists_;
  Statement record_fact_;
};

}  // namespace laconic::storage
