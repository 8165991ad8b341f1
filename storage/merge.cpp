#include "storage/merge.hpp"

#include <filesystem>
#include <map>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// The source is attached to the target's connection as `src` for the merge, and detached after
// it however it ends (SQLite cannot attach or detach inside a transaction).
class Attached {
 public:
  Attached(sqlite3* db, const std::string& path) : db_(db) {
    Statement attach(db_, "ATTACH DATABASE ?1 AS src");
    attach.bind_text(1, path);
    attach.run();
  }
  ~Attached() {
    try {
      exec(db_, "DETACH DATABASE src");
    } catch (const std::exception&) {
      // the connection is going away with the error that ended the merge
    }
  }
  Attached(const Attached&) = delete;
  Attached& operator=(const Attached&) = delete;

 private:
  sqlite3* db_;
};

std::int64_t count(sqlite3* db, const std::string& sql, std::int64_t id) {
  Statement query(db, sql);
  query.bind_int64(1, id);
  query.step();
  return query.column_int64(0);
}

// The target's id of each source experiment, inserting the ones it lacks (matched by name and
// file hash, which the experiments table holds unique).
std::map<std::int64_t, std::int64_t> merge_experiments(sqlite3* db, MergeReport& report) {
  std::map<std::int64_t, std::int64_t> ids;
  Statement experiments(db, "SELECT id, name, file_hash FROM src.experiments ORDER BY id");
  Statement find(db, "SELECT id FROM main.experiments WHERE name = ?1 AND file_hash = ?2");
  Statement insert(db,
                   "INSERT INTO main.experiments (name, file_path, file_hash, created, source) "
                   "SELECT name, file_path, file_hash, created, source FROM src.experiments WHERE id = ?1");
  while (experiments.step()) {
    const std::int64_t id = experiments.column_int64(0);
    find.reset();
    find.bind_text(1, experiments.column_text(1)).bind_text(2, experiments.column_text(2));
    if (find.step()) {
      ids[id] = find.column_int64(0);
      continue;
    }
    insert.reset();
    insert.bind_int64(1, id);
    insert.run();
    ids[id] = sqlite3_last_insert_rowid(db);
    ++report.experiments_added;
  }
  return ids;
}

// Runs an INSERT ... SELECT of source rows with ?1 = `to` and ?2 = `from`; returns the rows it
// inserted.
std::int64_t insert_select(sqlite3* db, const char* sql, std::int64_t to, std::int64_t from) {
  Statement statement(db, sql);
  statement.bind_int64(1, to).bind_int64(2, from);
  statement.run();
  return sqlite3_changes(db);
}

// Copies source run `from` (its row with its note, metrics, summary, facts and tags) as a new run of experiment
// `experiment`; returns how many metric rows it had.
std::int64_t copy_run(sqlite3* db, std::int64_t from, std::int64_t experiment) {
  insert_select(db,
                "INSERT INTO main.runs (experiment_id, name, config, swept, seed, repetition, status, created, "
                "started, ended, heartbeat, error, host, laconic_version, controller_pid, checkpoint_step, attempts, "
                "workers_silent, note) "
                "SELECT ?1, name, config, swept, seed, repetition, status, created, started, ended, heartbeat, error, "
                "host, laconic_version, NULL, NULL, attempts, workers_silent, note FROM src.runs WHERE id = ?2",
                experiment, from);
  const std::int64_t to = sqlite3_last_insert_rowid(db);
  const std::int64_t rows =
      insert_select(db,
                    "INSERT INTO main.metric_values (run_id, key_id, step, epoch, worker, wall_time, value) "
                    "SELECT ?1, mk.id, v.step, v.epoch, v.worker, v.wall_time, v.value FROM src.metric_values v "
                    "JOIN src.metric_keys sk ON sk.id = v.key_id JOIN main.metric_keys mk ON mk.name = sk.name "
                    "WHERE v.run_id = ?2 ORDER BY v.id",
                    to, from);
  insert_select(db,
                "INSERT INTO main.run_summary (run_id, key, last, min, max, sum, count, nan_count) "
                "SELECT ?1, key, last, min, max, sum, count, nan_count FROM src.run_summary WHERE run_id = ?2",
                to, from);
  insert_select(db,
                "INSERT INTO main.run_facts (run_id, key, value) SELECT ?1, key, value FROM src.run_facts "
                "WHERE run_id = ?2",
                to, from);
  insert_select(db,
                "INSERT INTO main.run_tags (run_id, tag, added) SELECT ?1, tag, added FROM src.run_tags "
                "WHERE run_id = ?2",
                to, from);
  return rows;
}

}  // namespace

MergeReport merge_database(Database& target, const std::string& source) {
  if (!std::filesystem::is_regular_file(source))
    throw ConfigError(str_cat("cannot merge '", source, "': no such database file"));
  std::error_code error;
  if (target.path() != ":memory:" && std::filesystem::equivalent(target.path(), source, error))
    throw ConfigError(str_cat("cannot merge '", source, "' into itself"));
  // Opening it checks that it is a laconic database of a schema this laconic knows (and brings an
  // older one up to date), so both sides have the same tables.
  Database::open_read_only(source);
  sqlite3* db = target.handle();
  Attached attached(db, source);
  MergeReport report;
  Transaction transaction(db);
  exec(db, "INSERT OR IGNORE INTO main.metric_keys (name) SELECT name FROM src.metric_keys");
  const auto experiments = merge_experiments(db, report);
  Statement runs(db, "SELECT id, experiment_id, name, config, created, status FROM src.runs ORDER BY id");
  Statement same(
      db, "SELECT id, created FROM main.runs WHERE experiment_id = ?1 AND name = ?2 AND config = ?3 ORDER BY id");
  while (runs.step()) {
    const std::int64_t id = runs.column_int64(0);
    const std::string name = runs.column_text(2), config = runs.column_text(3), status = runs.column_text(5);
    const double created = runs.column_double(4);
    const std::string what = str_cat("run ", id, " '", name, "' of ", source);
    if (status == "QUEUED" || status == "RUNNING") {
      report.skipped.push_back(str_cat(what, ": ", status, ", not ended yet"));
      continue;
    }
    const std::int64_t experiment = experiments.at(runs.column_int64(1));
    same.reset();
    same.bind_int64(1, experiment).bind_text(2, name).bind_text(3, config);
    std::int64_t copy_of = 0, other = 0;
    while (same.step()) {
      if (same.column_double(1) == created)
        copy_of = same.column_int64(0);
      else
        other = same.column_int64(0);
    }
    const std::int64_t rows = count(db, "SELECT count(*) FROM src.metric_values WHERE run_id = ?1", id);
    if (copy_of != 0 && count(db, "SELECT count(*) FROM main.metric_values WHERE run_id = ?1", copy_of) == rows) {
      report.duplicates.push_back(str_cat(what, " is run ", copy_of, " already"));
      continue;
    }
    report.metric_rows_added += copy_run(db, id, experiment);
    ++report.runs_added;
    if (copy_of != 0 || other != 0)
      report.conflicts.push_back(str_cat(what, " (", status, ") has the name and configuration of run ",
                                         copy_of != 0 ? copy_of : other,
                                         copy_of != 0 ? ", with other metrics" : ", recorded apart",
                                         ": both kept, as two attempts (reports use the latest FINISHED)"));
  }
  transaction.commit();
  return report;
}

}  // namespace laconic::storage
