#include "storage/migrations.hpp"

#include <iostream>

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

// Version 3: metric names are stored once, in metric_keys, and metric_values refers to them by
// integer id. Integer keys make every row and index entry smaller and cheaper to compare, and
// metric_values declares no foreign key (the writer checks the run exists when it opens a sink):
// together about 1.4x the ingest rate of version 2 (docs/benchmarks.md). `metrics` becomes a view
// with version 2's columns plus `seq` (the row's id, which grows with recording order), so SQL
// written against version 2 keeps working; inserting into the view still works through a trigger.
const char* const kSchemaV3 = R"sql(
CREATE TABLE metric_keys (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
INSERT INTO metric_keys (name) SELECT DISTINCT key FROM metrics ORDER BY key;
CREATE TABLE metric_values (
  id        INTEGER PRIMARY KEY,
  run_id    INTEGER NOT NULL,
  key_id    INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  epoch     INTEGER NOT NULL,
  worker    INTEGER NOT NULL,
  wall_time REAL,
  value     REAL
);
INSERT INTO metric_values (id, run_id, key_id, step, epoch, worker, wall_time, value)
SELECT m.rowid, m.run_id, k.id, m.step, m.epoch, m.worker, m.wall_time, m.value
FROM metrics m JOIN metric_keys k ON k.name = m.key ORDER BY m.rowid;
DROP TABLE metrics;
CREATE INDEX metric_values_by_run_key_step ON metric_values (run_id, key_id, step);
CREATE VIEW metrics (run_id, key, step, epoch, worker, wall_time, value, seq) AS
SELECT v.run_id, k.name, v.step, v.epoch, v.worker, v.wall_time, v.value, v.id
FROM metric_values v JOIN metric_keys k ON k.id = v.key_id;
CREATE TRIGGER metrics_insert INSTEAD OF INSERT ON metrics
BEGIN
  INSERT OR IGNORE INTO metric_keys (name) VALUES (NEW.key);
  INSERT INTO metric_values (run_id, key_id, step, epoch, worker, wall_time, value)
  VALUES (NEW.run_id, (SELECT id FROM metric_keys WHERE name = NEW.key), NEW.step, NEW.epoch, NEW.worker,
          NEW.wall_time, NEW.value);
END;
)sql";

// Version 4: facts about where and how a run ran, one (key, text value) pair each: the threads
// and BLAS library its ranks used, the host (docs/schema.md lists the keys). A table of pairs,
// not columns, so that a new fact needs no migration.
const char* const kSchemaV4 = R"sql(
CREATE TABLE run_facts (
  run_id INTEGER NOT NULL,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
)sql";

// Version 5: how long the run's workers had been silent at the controller's last heartbeat, so
// that a listing tells a run whose workers hang from a healthy one; and the recovery journals
// already replayed into this database (each is replayed exactly once).
const char* const kSchemaV5 = R"sql(
ALTER TABLE runs ADD COLUMN workers_silent REAL;
CREATE TABLE replayed_journals (
  journal_id TEXT PRIMARY KEY,
  path       TEXT NOT NULL,
  replayed   REAL NOT NULL,
  rows       INTEGER NOT NULL
);
)sql";

// Version 6: what users write about runs (tags, a note; `laconic tag`, `laconic note`, the only
// writes outside `run`), and run_results, one row per run with what "accuracy against bytes per
// compressor" needs, so that it is one SELECT from Python or sqlite3 (docs/schema.md).
const char* const kSchemaV6 = R"sql(
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL,
  tag    TEXT NOT NULL,
  added  REAL NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
ALTER TABLE runs ADD COLUMN note TEXT;
CREATE VIEW run_results AS
SELECT r.id AS run_id, e.name AS experiment, r.name AS name, r.status AS status, r.swept AS swept,
       r.seed AS seed, r.repetition AS repetition,
       json_extract(r.config, '$.compressor.name') AS compressor,
       json_extract(r.config, '$.workers') AS workers,
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_accuracy') AS test_accuracy,
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_perplexity') AS test_perplexity,
       (SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_sent') AS bytes_sent,
       (SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_dense') AS bytes_dense,
       (SELECT d.sum / nullif(b.sum, 0) FROM run_summary d, run_summary b
        WHERE d.run_id = r.id AND d.key = 'bytes_dense' AND b.run_id = r.id AND b.key = 'bytes_sent')
         AS compression_ratio,
       r.ended - r.started AS wall_time,
       (SELECT group_concat(t.tag, ',') FROM (SELECT tag FROM run_tags WHERE run_id = r.id ORDER BY tag) t) AS tags,
       r.note AS note
FROM runs r JOIN experiments e ON e.id = r.experiment_id;
)sql";

// Version 7: run_results carries each run's compressor with every field (compressor_config, JSON
// text), so that two Top-k ratios do not merge in a GROUP BY compressor.
const char* const kSchemaV7 = R"sql(
DROP VIEW run_results;
CREATE VIEW run_results AS
SELECT r.id AS run_id, e.name AS experiment, r.name AS name, r.status AS status, r.swept AS swept,
       r.seed AS seed, r.repetition AS repetition,
       json_extract(r.config, '$.compressor.name') AS compressor,
       json_extract(r.config, '$.compressor') AS compressor_config,
       json_extract(r.config, '$.workers') AS workers,
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_accuracy') AS test_accuracy,
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_perplexity') AS test_perplexity,
       (SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_sent') AS bytes_sent,
       (SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_dense') AS bytes_dense,
       (SELECT d.sum / nullif(b.sum, 0) FROM run_summary d, run_summary b
        WHERE d.run_id = r.id AND d.key = 'bytes_dense' AND b.run_id = r.id AND b.key = 'bytes_sent')
         AS compression_ratio,
       r.ended - r.started AS wall_time,
       (SELECT group_concat(t.tag, ',') FROM (SELECT tag FROM run_tags WHERE run_id = r.id ORDER BY tag) t) AS tags,
       r.note AS note
FROM runs r JOIN experiments e ON e.id = r.experiment_id;
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
      {3, "metrics split into metric_keys and metric_values (integer keys); metrics is a view", kSchemaV3},
      {4, "run_facts: threads, BLAS library and host of each run", kSchemaV4},
      {5, "runs.workers_silent; replayed_journals", kSchemaV5},
      {6, "run_tags, runs.note; the run_results view", kSchemaV6},
      {7, "run_results.compressor_config", kSchemaV7},
  };
  return all;
}

int latest_schema_version() { return migrations().back().version; }

int read_schema_version(sqlite3* db, const std::string& path) {
  if (!has_table(db, "schema_version")) {
    Statement any(db, "SELECT name FROM sqlite_master WHERE type = 'table' LIMIT 1");
    if (any.step())
      throw StorageError(str_cat("database ", path, " is not a laconic database: it has table '", any.column_text(0),
                                 "' but no schema_version"),
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
  if (version > 0)  // creating a fresh database is quick; migrating a big one may take a while
    std::cerr << "laconic: migrating " << path << " from schema version " << version << " to " << target << "\n";
  if (version == 0)
    exec(db,
         "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
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
