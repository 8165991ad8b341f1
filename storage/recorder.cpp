#include "storage/recorder.hpp"

#include <unistd.h>

#include <array>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "engine/core/host_name.hpp"
#include "storage/queries.hpp"
#include "storage/sqlite_sink.hpp"

namespace laconic::storage {
namespace {

Database& writable(Database& db) {
  if (db.read_only())
    throw StorageError(str_cat("cannot record into database ", db.path(), ": it was opened read-only"),
                       SQLITE_READONLY);
  return db;
}

// The controller's host as runs record it.
std::string recorded_host() {
  const std::string name = host_name();
  return name.empty() ? "unknown" : name;
}

}  // namespace

Recorder::Recorder(Database& db)
    : db_(writable(db)),
      insert_experiment_(
          db.handle(),
          "INSERT INTO experiments (name, file_path, file_hash, created, source) VALUES (?1, ?2, ?3, ?4, ?5) "
          "ON CONFLICT (name, file_hash) DO NOTHING"),
      select_experiment_(db.handle(), "SELECT id FROM experiments WHERE name = ?1 AND file_hash = ?2"),
      insert_run_(db.handle(),
                  "INSERT INTO runs (experiment_id, name, config, swept, seed, repetition, status, created, host, "
                  "laconic_version, controller_pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'QUEUED', ?7, ?8, ?9, ?10)"),
      start_run_(db.handle(),
                 "UPDATE runs SET status = 'RUNNING', started = ?2, heartbeat = ?2, ended = NULL, "
                 "error = NULL, attempts = attempts + 1, controller_pid = ?3 WHERE id = ?1 AND status IN ('QUEUED', "
                 "'FAILED', 'KILLED') AND (?4 IS NULL OR attempts = ?4)"),
      heartbeat_(db.handle(), "UPDATE runs SET heartbeat = ?2, workers_silent = ?3 WHERE id = ?1"),
      finish_run_(db.handle(),
                  "UPDATE runs SET status = ?3, ended = ?2, heartbeat = ?2, error = ?4, workers_silent = NULL "
                  "WHERE id = ?1"),
      find_finished_(db.handle(), kFinishedRunQuery),
      find_unfinished_(db.handle(),
                       "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                       "WHERE e.name = ?1 AND r.status != 'FINISHED' AND r.config = ?2 ORDER BY r.id DESC LIMIT 1"),
      record_checkpoint_(db.handle(), "UPDATE runs SET checkpoint_step = ?2 WHERE id = ?1"),
      run_exists_(db.handle(), "SELECT 1 FROM runs WHERE id = ?1"),
      record_fact_(db.handle(), "INSERT OR REPLACE INTO run_facts (run_id, key, value) VALUES (?1, ?2, ?3)") {}

void Recorder::record_fact(std::int64_t run_id, const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  record_fact_.reset();
  record_fact_.bind_int64(1, run_id).bind_text(2, key).bind_text(3, value);
  record_fact_.run();
}

std::int64_t Recorder::add_experiment(const std::string& name, const std::string& file_path,
                                      const std::string& file_hash, const std::string& source) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  insert_experiment_.reset();
  insert_experiment_.bind_text(1, name).bind_text(2, file_path).bind_text(3, file_hash).bind_double(4, unix_now());
  if (source.empty())
    insert_experiment_.bind_null(5);
  else
    insert_experiment_.bind_text(5, source);
  insert_experiment_.run();
  select_experiment_.reset();
  select_experiment_.bind_text(1, name).bind_text(2, file_hash);
  LACONIC_ENFORCE(select_experiment_.step(), "experiment '", name, "' with hash ", file_hash,
                  " not found after insert");
  const std::int64_t id = select_experiment_.column_int64(0);
  select_experiment_.reset();
  return id;
}

std::int64_t Recorder::add_run(std::int64_t experiment_id, const RunConfig& config) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  insert_run_.reset();
  insert_run_.bind_int64(1, experiment_id)
      .bind_text(2, config.name)
      .bind_text(3, config.to_json().dump())
      .bind_text(4, config.swept_json().dump())
      .bind_int64(5, config.seed)
      .bind_int64(6, config.repetition)
      .bind_double(7, unix_now())
      .bind_text(8, recorded_host())
      .bind_text(9, LACONIC_STORAGE_VERSION)
      .bind_int64(10, ::getpid());
  try {
    insert_run_.run();
  } catch (StorageError& e) {
    e.add_context(str_cat("while adding run '", config.name, "' to experiment id ", experiment_id));
    throw;
  }
  return sqlite3_last_insert_rowid(db_.handle());
}

void Recorder::update_one(Statement& statement, std::int64_t run_id, const char* what) {
  statement.run();
  if (sqlite3_changes(db_.handle()) != 1)
    throw StorageError(str_cat("cannot ", what, ": no run with id ", run_id, " in ", db_.path()), -1);
}

bool Recorder::start_run(std::int64_t run_id, std::optional<std::int64_t> attempts, std::optional<double> started) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  start_run_.reset();
  start_run_.bind_int64(1, run_id).bind_double(2, started.value_or(unix_now())).bind_int64(3, ::getpid());
  if (attempts)
    start_run_.bind_int64(4, *attempts);
  else
    start_run_.bind_null(4);
  start_run_.run();
  if (sqlite3_changes(db_.handle()) == 1) return true;
  run_exists_.reset();
  run_exists_.bind_int64(1, run_id);
  const bool exists = run_exists_.step();
  run_exists_.reset();
  if (!exists) throw StorageError(str_cat("cannot start run: no run with id ", run_id, " in ", db_.path()), -1);
  return false;
}

void Recorder::heartbeat(std::int64_t run_id, double workers_silent) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  heartbeat_.reset();
  heartbeat_.bind_int64(1, run_id).bind_double(2, unix_now()).bind_double(3, workers_silent);
  update_one(heartbeat_, run_id, "record heartbeat");
}

void Recorder::finish_run(std::int64_t run_id, RunStatus status, const std::string& error,
                          std::optional<double> ended) {
  if (!is_final(status))
    throw ConfigError(str_cat("cannot finish run ", run_id, " with status ", to_string(status),
                              "; a final status is one of FINISHED, FAILED, KILLED, DIVERGED"));
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  finish_run_.reset();
  finish_run_.bind_int64(1, run_id).bind_double(2, ended.value_or(unix_now())).bind_text(3, to_string(status));
  if (error.empty())
    finish_run_.bind_null(4);
  else
    finish_run_.bind_text(4, error);
  update_one(finish_run_, run_id, "finish run");
}

std::optional<std::int64_t> Recorder::find_finished(const std::string& experiment, const RunConfig& config) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  find_finished_.reset();
  find_finished_.bind_text(1, experiment).bind_text(2, config.to_json().dump());
  std::optional<std::int64_t> id;
  if (find_finished_.step()) id = find_finished_.column_int64(0);
  find_finished_.reset();
  return id;
}

std::optional<std::int64_t> Recorder::find_unfinished(const std::string& experiment, const RunConfig& config) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  find_unfinished_.reset();
  find_unfinished_.bind_text(1, experiment).bind_text(2, config.to_json().dump());
  std::optional<std::int64_t> id;
  if (find_unfinished_.step()) id = find_unfinished_.column_int64(0);
  find_unfinished_.reset();
  return id;
}

void Recorder::record_checkpoint(std::int64_t run_id, std::int64_t step) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  record_checkpoint_.reset();
  record_checkpoint_.bind_int64(1, run_id).bind_int64(2, step);
  update_one(record_checkpoint_, run_id, "record a checkpoint");
}

// `last` is the value of the newest remaining row of the key (ids grow with recording order).
const char* const kRebuildSummary = R"sql(
INSERT INTO run_summary (run_id, key, last, min, max, sum, count, nan_count)
SELECT ?1, k.name,
       (SELECT l.value FROM metric_values l WHERE l.run_id = ?1 AND l.key_id = v.key_id ORDER BY l.id DESC LIMIT 1),
       min(v.value), max(v.value),
       CASE WHEN count(v.value) = 0 THEN 0 ELSE sum(v.value) END,
       count(v.value), sum(v.value IS NULL)
FROM metric_values v JOIN metric_keys k ON k.id = v.key_id WHERE v.run_id = ?1 GROUP BY v.key_id
)sql";

void Recorder::rewind_run(std::int64_t run_id, std::int64_t step) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  try {
    Transaction transaction(db_.handle());
    Statement drop_metrics(db_.handle(), "DELETE FROM metric_values WHERE run_id = ?1 AND step >= ?2");
    drop_metrics.bind_int64(1, run_id).bind_int64(2, step);
    drop_metrics.run();
    Statement drop_summary(db_.handle(), "DELETE FROM run_summary WHERE run_id = ?1");
    drop_summary.bind_int64(1, run_id);
    drop_summary.run();
    Statement rebuild(db_.handle(), kRebuildSummary);
    rebuild.bind_int64(1, run_id);
    rebuild.run();
    transaction.commit();
  } catch (StorageError& e) {
    e.add_context(str_cat("while rewinding run ", run_id, " to step ", step, " in ", db_.path()));
    throw;
  }
}

void Recorder::require_run(std::int64_t run_id, const char* what) {
  std::lock_guard<std::mutex> lock(db_.write_mutex());
  run_exists_.reset();
  run_exists_.bind_int64(1, run_id);
  const bool exists = run_exists_.step();
  run_exists_.reset();
  if (!exists) throw StorageError(str_cat("cannot ", what, ": no run with id ", run_id, " in ", db_.path()), -1);
}

std::unique_ptr<MetricsSink> Recorder::metrics_sink(std::int64_t run_id) {
  require_run(run_id, "record metrics");
  return std::make_unique<SqliteSink>(db_, run_id);
}

std::unique_ptr<SqliteSink> Recorder::retrying_sink(std::int64_t run_id) {
  require_run(run_id, "record metrics");
  return std::make_unique<SqliteSink>(db_, run_id, SqliteSink::kBatchRows, OnWriteFailure::KeepAndRetry);
}

}  // namespace laconic::storage
