#pragma once
// Read-side queries: run listings (from run_summary only), one metric's history, a run's summary.
// They work on read-only and read-write connections alike.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/metrics.hpp"
#include "storage/database.hpp"

namespace laconic::storage {

/// One row of `experiments`.
struct ExperimentRow {
  std::int64_t id = 0;
  std::string name;
  std::string file_path;
  std::string file_hash;  ///< hex digest of the experiment file's bytes
  double created = 0;     ///< unix seconds
};

/// One run as `laconic runs` lists it.
struct RunRow {
  std::int64_t id = 0;
  std::string experiment;  ///< experiment name
  std::string name;        ///< run name ("compressor=topk,seed=1")
  std::string status;      ///< runs.status text, e.g. "FINISHED"
  std::string error;       ///< "" when the run recorded no error
  std::int64_t seed = 0;
  std::int64_t repetition = 0;
  std::string swept;       ///< JSON text of the swept variables
  double started = std::numeric_limits<double>::quiet_NaN();    ///< unix seconds; NaN before start
  double ended = std::numeric_limits<double>::quiet_NaN();      ///< unix seconds; NaN until it ends
  double heartbeat = std::numeric_limits<double>::quiet_NaN();  ///< unix seconds; NaN before start
  /// Seconds: ended - started, or now - started while running, 0 before it started.
  double wall_time = 0;
  /// Last recorded "test_accuracy" (fraction in [0, 1]); NaN if none.
  double final_test_accuracy = std::numeric_limits<double>::quiet_NaN();
  double bytes_sent = 0;   ///< sum of "bytes_sent" over steps and workers, bytes
  double bytes_dense = 0;  ///< sum of "bytes_dense" over steps and workers, bytes
  std::string host;                   ///< host of the controller that recorded it
  std::int64_t controller_pid = 0;    ///< its process id; 0 if unknown (schema 1 runs)
  std::int64_t attempts = 0;          ///< times the run was started (resumes count)
  std::optional<std::int64_t> checkpoint_step;  ///< step its newest checkpoint resumes at
  /// RUNNING, but nobody is running it: its heartbeat is older than kStaleAfterSeconds, or its
  /// controller was on this host and that process is gone. See status_label().
  bool stale = false;

  /// The status as listings show it: "RUNNING (stale)" for a stale run, else `status`.
  std::string status_label() const { return stale ? status + " (stale)" : status; }
};

/// A RUNNING run whose heartbeat is older than this many seconds is stale. The controller beats
/// every few seconds while a run trains (cli/launcher.cpp), so this leaves a wide margin.
inline constexpr double kStaleAfterSeconds = 60;

/// Restricts list_runs(); unset fields match everything.
struct RunFilter {
  std::optional<std::string> experiment;  ///< experiment name
  std::optional<std::string> status;      ///< "FINISHED", ...; ConfigError if unknown
};

/// The run_summary row of one key. min / max / sum / count cover the non-NaN values; `last` is
/// the most recently recorded value (NaN if that was NaN); min and max are NaN when count is 0.
struct Summary {
  double last = std::numeric_limits<double>::quiet_NaN();
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  std::int64_t count = 0;      ///< non-NaN values recorded
  std::int64_t nan_count = 0;  ///< NaN values recorded
};

/// All experiments, ordered by id (one row per name and file hash).
std::vector<ExperimentRow> list_experiments(Database& db);

/// Runs matching `filter`, ordered by id. Reads runs and run_summary only, never metrics.
std::vector<RunRow> list_runs(Database& db, const RunFilter& filter = {});

/// One run by id, if it exists.
std::optional<RunRow> find_run(Database& db, std::int64_t run_id);

/// Every value of `key` recorded for the run, ordered by epoch, step, worker (then insertion).
/// NaN values (stored as NULL) read back as NaN.
std::vector<MetricRecord> metrics_of(Database& db, std::int64_t run_id, const std::string& key);

/// The run's run_summary rows, by key.
std::map<std::string, Summary> summary_of(Database& db, std::int64_t run_id);

}  // namespace laconic::storage
