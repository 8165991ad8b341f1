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
#include "storage/run_status.hpp"

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
  std::string experiment;                ///< experiment name
  std::string name;                      ///< run name ("compressor=topk,seed=1")
  RunStatus status = RunStatus::Queued;  ///< runs.status
  std::string error;                     ///< "" when the run recorded no error
  std::int64_t seed = 0;
  std::int64_t repetition = 0;
  std::string swept;   ///< JSON text of the swept variables
  std::string config;  ///< JSON text of the fully resolved configuration (RunConfig::to_json)
  double created = std::numeric_limits<double>::quiet_NaN();    ///< unix seconds, when planned
  double started = std::numeric_limits<double>::quiet_NaN();    ///< unix seconds; NaN before start
  double ended = std::numeric_limits<double>::quiet_NaN();      ///< unix seconds; NaN until it ends
  double heartbeat = std::numeric_limits<double>::quiet_NaN();  ///< unix seconds; NaN before start
  /// Seconds: ended - started, or now - started while running, 0 before it started.
  double wall_time = 0;
  /// Last recorded "test_accuracy" (fraction in [0, 1]); NaN if none.
  double final_test_accuracy = std::numeric_limits<double>::quiet_NaN();
  /// Last recorded "test_loss" (loss units); NaN if none.
  double final_test_loss = std::numeric_limits<double>::quiet_NaN();
  /// Last recorded "test_perplexity" (language models); NaN if none.
  double final_test_perplexity = std::numeric_limits<double>::quiet_NaN();
  double bytes_sent = 0;                        ///< sum of keys::kBytesSent over steps and workers, bytes
  double bytes_dense = 0;                       ///< sum of keys::kBytesDense over steps and workers, bytes
  std::string host;                             ///< host of the controller that recorded it
  std::string laconic_version;                  ///< version of the binary that recorded it
  std::int64_t controller_pid = 0;              ///< its process id; 0 if unknown (schema 1 runs)
  std::int64_t attempts = 0;                    ///< times the run was started (resumes count)
  std::optional<std::int64_t> checkpoint_step;  ///< step its newest checkpoint resumes at
  /// RUNNING, but nobody is running it: its heartbeat is older than kStaleAfterSeconds, or its
  /// controller was on this host and that process is gone. See status_label().
  bool stale = false;
  /// Seconds the most silent of its workers had sent nothing, at the controller's last
  /// heartbeat; NaN when not recorded (runs before schema 5, or not running).
  double workers_silent = std::numeric_limits<double>::quiet_NaN();
  std::string note;               ///< what `laconic note` said about it; "" for none
  std::vector<std::string> tags;  ///< its tags (`laconic tag`), sorted

  /// The status as listings show it: "RUNNING (stale)" for a stale run, "RUNNING (workers silent
  /// 42s)" for a live controller whose workers have been silent longer than
  /// kSilentWorkersAfterSeconds (a hang the controller has not yet called), else `status`.
  std::string status_label() const;
  /// bytes_dense / bytes_sent: how many times fewer bytes it sent than the dense exchange; NaN when
  /// it sent nothing. The one formula behind runs' ratio, export's compression_ratio and the UI's
  /// compression column (the run_results view computes the same in SQL for `laconic query`).
  double compression_ratio() const;
};

/// Whether the controller that planned or runs `row` is alive: on this host, its process exists;
/// on another, it beat (or, for a QUEUED run, planned it) within kStaleAfterSeconds.
bool controller_alive(const RunRow& row);

/// Workers silent longer than this make a RUNNING run's label say so.
inline constexpr double kSilentWorkersAfterSeconds = 10;

/// A RUNNING run whose heartbeat is older than this many seconds is stale. The controller beats
/// every few seconds while a run trains (controller/launcher.cpp), so this leaves a wide margin.
inline constexpr double kStaleAfterSeconds = 60;

/// Restricts list_runs(); unset fields match everything.
struct RunFilter {
  std::optional<std::string> experiment;  ///< experiment name
  std::optional<std::string> status;      ///< "FINISHED", ...; ConfigError if unknown
  std::optional<std::int64_t> newest;     ///< only the N matching runs of highest id
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

/// Per epoch of one run (epoch >= 0; a parameter server's rows at epoch -1 are left out). Every
/// value is NaN when the run did not record that key in that epoch.
struct EpochRow {
  std::int64_t epoch = 0;
  double test_accuracy = std::numeric_limits<double>::quiet_NaN();     ///< worker 0, fraction
  double test_loss = std::numeric_limits<double>::quiet_NaN();         ///< worker 0, loss units
  double test_perplexity = std::numeric_limits<double>::quiet_NaN();   ///< worker 0
  double epoch_train_loss = std::numeric_limits<double>::quiet_NaN();  ///< mean over workers
  double epoch_time = std::numeric_limits<double>::quiet_NaN();        ///< slowest worker, seconds
  double bytes_sent = 0;   ///< sum over the epoch's steps and workers, bytes
  double bytes_dense = 0;  ///< the same exchange uncompressed, bytes
};

/// How many runs the database holds and their smallest and largest id (0 and 0 when none).
struct IdRange {
  std::int64_t count = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
};

/// All experiments, ordered by id (one row per name and file hash).
std::vector<ExperimentRow> list_experiments(Database& db);

/// Runs matching `filter`, ordered by id. Reads runs and run_summary only, never metrics.
std::vector<RunRow> list_runs(Database& db, const RunFilter& filter = {});

/// The newest FINISHED run of `experiment` whose recorded configuration is `config_json`
/// (RunConfig::to_json().dump()): what `laconic run --resume` skips (Recorder::find_finished
/// asks the same, kFinishedRunQuery), and `laconic check --db` marks.
std::optional<std::int64_t> find_finished_run(Database& db, const std::string& experiment,
                                              const std::string& config_json);

/// That query's SQL: ?1 the experiment's name, ?2 the configuration's JSON text.
inline constexpr const char* kFinishedRunQuery =
    "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id "
    "WHERE e.name = ?1 AND r.status = 'FINISHED' AND r.config = ?2 ORDER BY r.id DESC LIMIT 1";

/// A run's configuration, the run less its seed, as a key: its experiment and its swept
/// variables without `seed`. The seeds of one configuration share it; what `laconic best --by
/// configuration` groups by and the UI's compare page draws as one band (served as
/// `configuration` by /api/runs).
std::string configuration_key(const RunRow& run);

/// Its name less the seed part ("compressor=topk,ratio=0.01"); "(no swept variable)" when
/// nothing else is left.
std::string configuration_label(const RunRow& run);

/// One run by id, if it exists.
std::optional<RunRow> find_run(Database& db, std::int64_t run_id);

/// Every value of `key` recorded for the run, ordered by epoch, step, worker (then insertion).
/// NaN values (stored as NULL) read back as NaN.
std::vector<MetricRecord> metrics_of(Database& db, std::int64_t run_id, const std::string& key);

/// One run by id; ConfigError naming the ids that exist when there is none (for the CLI).
RunRow require_run(Database& db, std::int64_t run_id);

/// Count and id range of the runs.
IdRange run_id_range(Database& db);

/// The metric keys recorded (in run_summary) for any run, or for the runs of `experiment`, sorted.
std::vector<std::string> metric_keys(Database& db, const std::optional<std::string>& experiment = std::nullopt);

/// The run_summary row of `key` for every run that recorded it, by run id.
std::map<std::int64_t, Summary> summaries_of_key(Database& db, const std::string& key);

/// The per-epoch table of one run, ordered by epoch (reads the run's rows of the few keys it
/// needs through the metrics index).
std::vector<EpochRow> epochs_of(Database& db, std::int64_t run_id);

/// The run's run_summary rows, by key.
std::map<std::string, Summary> summary_of(Database& db, std::int64_t run_id);

/// The run's rows of run_facts, by key (empty for a run recorded before schema 4).
std::map<std::string, std::string> facts_of(Database& db, std::int64_t run_id);

/// One fact of every run that recorded it, by run id.
std::map<std::int64_t, std::string> fact_of_runs(Database& db, const std::string& key);

}  // namespace laconic::storage
