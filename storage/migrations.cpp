#include "storage/migrations.hpp"

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// Version 1: the tables of docs/schema.md. NaN metric values are stored as NULL (SQLite turns a
// NaN REAL into NULL anyway); infinities are ordinary REALs.
const char* const kSchemaV1 = R"sql(
CREATE TABLE experiments (
  id        INTEGER PRIMARY KEY,
  name      TEXT NOT NULL,
  file_path TEXT NOT NULL,
  file_hash TEXT NOT NULL,
  created   REAL NOT NULL,
  UNIQUE (name, file_hash)
);
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  experiment_id   INTEGER NOT NULL REFERENCES experiments(id),
  name            TEXT NOT NULL,
  config          TEXT NOT NULL,
  swept           TEXT NOT NULL,
  seed            INTEGER NOT NULL,
  repetition      INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN
                    ('QUEUED', 'RUNNING', 'FINISHED', 'FAILED', 'KILLED', 'DIVERGED')),
  created         REAL NOT NULL,
  started         REAL,
  ended           REAL,
  heartbeat       REAL,
  error           TEXT,
  host            TEXT,
  laconic_version TEXT
);
CREATE INDEX runs_by_experiment ON runs (experiment_id, name);
CREATE INDEX runs_by_status ON runs (status);
CREATE TABLE metrics (
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key       TEXT NOT NULL,
  step      INTEGER NOT NULL,
  epoch     INTEGER NOT NULL,
  worker    INTEGER NOT NULL,
  wall_time REAL,
  value     REAL
);
CREATE INDEX metrics_by_run_key_step ON metrics (run_id, key, step);
CREATE TABLE run_summary (
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key       TEXT NOT NULL,
  last      REAL,
  min       REAL,
  max       REAL,
  sum       REAL,
  count     INTEGER NOT NULL,
  nan_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
)sql";

// Version 2: what resuming and stale detection need. The experiment file's text (so a resume can
// tell what changed and a result can be traced to its exact source), the controller's process id
// (a RUNNING run whose controller is gone on this host is dead whatever its heartbeat says), the
// step a run's newest durable checkpoint resumes at, and how many times a run was started.
const char* const kSchemaV2 = R"sql(
ALTER TABLE experiments ADD COLUMN source TEXT;
ALTER TABLE runs ADD COLUMN controller_pid INTEGER;
ALTER TABLE runs ADD COLUMN checkpoint_step INTEGER;
ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET attempts = 1 WHERE started IS NOT NULL;
)sql";

bool has_table(sqlite3* db, const std::string& name) {
  Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  query.bind_text(1, name);
  return query.step();
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all{
      {1, "experiments, runs, metrics, run_summary", kSchemaV1},
      {2, "experiments.source, runs.controller_pid, runs.checkpoint_step, runs.attempts", kSchemaV2},
  };
  return all;
}

int latest_schema_version() { return migrations().back().version; }

int read_schema_version(sqlite3* db, const std::string& path) {
  if (!has_table(db, "schema_version")) {
    Statement any(db, "SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 1");
    if (any.step())
      throw StorageError(str_cat("database ", path, " is not a laconic database: it has table '",
                                 any.column_text(0), "' but no schema_version"),
                         -1);
    return 0;
  }
  Statement query(db, "SELECT coalesce(max(version), 0) FROM schema_version");
  query.step();
  return static_cast<int>(query.column_int64(0));
}

void refuse_newer(int version, const std::string& path) {
  if (version > latest_schema_version())
    throw StorageError(str_cat("database ", path, " has schema version ", version, "; this laconic knows up to ",
                               latest_schema_version(), "; upgrade laconic"),
                       -1);
}

int migrate(sqlite3* db, const std::string& path, int target) {
  if (target < 0) target = latest_schema_version();
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file cannot both
  // create the tables; the loser sees the winner's version once it gets the lock.
  Transaction transaction(db);
  int version = read_schema_version(db, path);  // refuses a database of other tables
  refuse_newer(version, path);
  if (version >= target) return version;
  if (version == 0)
    exec(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
             "description TEXT NOT NULL, applied REAL NOT NULL)");
  Statement record(db, "INSERT INTO schema_version (version, description, applied) VALUES (?1, ?2, ?3)");
  for (const Migration& migration : migrations()) {
    if (migration.version <= version || migration.version > target) continue;
    try {
      exec(db, migration.sql);
    } catch (StorageError& e) {
      e.add_context(str_cat("while migrating ", path, " to schema version ", migration.version));
      throw;
    }
    record.reset();
    record.bind_int64(1, migration.version).bind_text(2, migration.description).bind_double(3, unix_now());
    record.run();
    version = migration.version;
  }
  transaction.commit();
  return version;
}

}  // namespace laconic::storage
