#include <string>

#include <sqlite3.h>
#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "storage/database.hpp"
#include "storage/migrations.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::TempDir;

namespace {

std::string pragma_text(Database& db, const std::string& pragma) {
  Statement q(db.handle(), "PRAGMA " + pragma);
  REQUIRE(q.step());
  return q.column_text(0);
}

bool has_table(Database& db, const std::string& name, const std::string& type = "table") {
  Statement q(db.handle(), "SELECT 1 FROM sqlite_master WHERE type = ?2 AND name = ?1");
  q.bind_text(1, name).bind_text(2, type);
  return q.step();
}

// A database as an older laconic left it: the migrations up to `version`, then `sql`.
void write_old_database(const std::string& path, int version, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  CHECK(migrate(raw, path, version) == version);
  exec(raw, sql);
  sqlite3_close(raw);
}

}  // namespace

TEST_CASE("a new database gets every table at the latest schema version", "[storage][schema]") {
  TempDir dir;
  const std::string kind = GENERATE(as<std::string>{}, "memory", "file");
  const std::string path = kind == "memory" ? ":memory:" : dir.file("runs.db");
  auto db = Database::open(path);
  CHECK(db->schema_version() == latest_schema_version());
  for (const char* table : {"schema_version", "experiments", "runs", "metric_keys", "metric_values", "run_summary"}) {
    INFO("table " << table);
    CHECK(has_table(*db, table));
  }
  CHECK(has_table(*db, "metrics", "view"));
  CHECK_FALSE(has_table(*db, "metrics"));
  CHECK(pragma_text(*db, "foreign_keys") == "1");
}

TEST_CASE("reopening a file database keeps its data and does not migrate twice", "[storage][schema]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  {
    auto db = Database::open(path);
    exec(db->handle(), "INSERT INTO experiments (name, file_path, file_hash, created) VALUES ('x', 'x.lua', 'h', 0)");
  }
  auto db = Database::open(path);
  CHECK(db->schema_version() == latest_schema_version());
  Statement count(db->handle(), "SELECT (SELECT count(*) FROM experiments), (SELECT count(*) FROM schema_version)");
  REQUIRE(count.step());
  CHECK(count.column_int64(0) == 1);
  CHECK(count.column_int64(1) == static_cast<std::int64_t>(migrations().size()));
}

TEST_CASE("a file database is opened in WAL mode with a busy timeout", "[storage][schema]") {
  TempDir dir;
  auto db = Database::open(dir.file("runs.db"));
  CHECK(pragma_text(*db, "journal_mode") == "wal");
  CHECK(pragma_text(*db, "busy_timeout") == std::to_string(Database::kBusyTimeoutMs));
}

TEST_CASE("a database of a newer schema version is refused with a clear message", "[storage][schema]") {
  TempDir dir;
  const std::string path = dir.file("future.db");
  {
    auto db = Database::open(path);
    exec(db->handle(), "INSERT INTO schema_version (version, description, applied) VALUES (99, 'from the future', 0)");
  }
  const std::string expected = "database " + path + " has schema version 99; this laconic knows up to " +
                               std::to_string(latest_schema_version()) + "; upgrade laconic";
  CHECK_THROWS_MATCHES(Database::open(path), StorageError, Catch::Matchers::Message(expected));
  CHECK_THROWS_MATCHES(Database::open_read_only(path), StorageError, Catch::Matchers::Message(expected));
}

TEST_CASE("opening a missing database read-only fails and names the path", "[storage][schema]") {
  TempDir dir;
  const std::string path = dir.file("missing.db");
  CHECK_THROWS_WITH(Database::open_read_only(path), Catch::Contains(path) && Catch::Contains("does not exist"));
}

TEST_CASE("a SQLite database of other tables is not taken for a laconic one", "[storage][schema]") {
  TempDir dir;
  const std::string path = dir.file("other.db");
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  exec(raw, "CREATE TABLE photos (id INTEGER)");
  sqlite3_close(raw);
  CHECK_THROWS_WITH(Database::open(path), Catch::Contains("not a laconic database") && Catch::Contains("photos"));
}

TEST_CASE("a failing statement throws StorageError with the SQL, the message and the code", "[storage][errors]") {
  auto db = Database::open(":memory:");
  try {
    exec(db->handle(), "INSERT INTO no_such_table VALUES (1)");
    FAIL("expected a StorageError");
  } catch (const StorageError& e) {
    CHECK(e.code() == SQLITE_ERROR);
    CHECK_THAT(e.what(), Catch::Contains("INSERT INTO no_such_table") && Catch::Contains("no such table") &&
                             Catch::Contains("SQLite code 1"));
  }
}

TEST_CASE("a database of the first schema is migrated forward keeping every row", "[storage][schema][migration]") {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  // What laconic wrote before schema 2: migrations up to 1, then a run that started.
  write_old_database(path, 1, R"sql(
      INSERT INTO experiments (id, name, file_path, file_hash, created) VALUES (1, 'fmnist', 'f.lua', 'h', 10);
      INSERT INTO runs (id, experiment_id, name, config, swept, seed, repetition, status, created, started, ended)
        VALUES (1, 1, 'a', '{}', '{}', 1, 0, 'FINISHED', 10, 11, 12),
               (2, 1, 'b', '{}', '{}', 1, 0, 'QUEUED', 10, NULL, NULL);
      INSERT INTO metrics (run_id, key, step, epoch, worker, wall_time, value)
        VALUES (1, 'train_loss', 0, 0, 0, 0.5, 2.5), (1, 'time_step', 0, 0, 0, 0.5, 0.25),
               (1, 'train_loss', 1, 0, 0, 0.6, NULL), (1, 'bytes_sent', 1, 0, 0, 0.6, 1e300);
      INSERT INTO run_summary (run_id, key, last, min, max, sum, count, nan_count)
        VALUES (1, 'train_loss', NULL, 2.5, 2.5, 2.5, 1, 1);
    )sql");
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  {
    Statement columns(raw, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'attempts'");
    REQUIRE(columns.step());
    CHECK(columns.column_int64(0) == 0);  // really the first schema
  }
  sqlite3_close(raw);
  auto db = Database::open(path);
  CHECK(db->schema_version() == latest_schema_version());
  Statement versions(db->handle(), "SELECT group_concat(version) FROM schema_version");
  REQUIRE(versions.step());
  CHECK(versions.column_text(0) == "1,2,3,4,5,6,7");

  Statement runs(db->handle(),
                 "SELECT id, status, attempts, controller_pid IS NULL, checkpoint_step IS NULL "
                 "FROM runs ORDER BY id");
  REQUIRE(runs.step());
  CHECK(runs.column_int64(0) == 1);
  CHECK(runs.column_text(1) == "FINISHED");
  CHECK(runs.column_int64(2) == 1);  // it had started once
  CHECK(runs.column_int64(3) == 1);
  CHECK(runs.column_int64(4) == 1);
  REQUIRE(runs.step());
  CHECK(runs.column_int64(2) == 0);  // never started
  CHECK_FALSE(runs.step());

  // Schema 3 moved the rows into metric_values with integer keys; the metrics view shows them as
  // they were, in their recording order (seq is the old rowid).
  Statement metrics(db->handle(),
                    "SELECT group_concat(key || '@' || step || '=' || coalesce(value, 'NaN') || '#' || seq, ' ') "
                    "FROM (SELECT * FROM metrics WHERE run_id = 1 ORDER BY seq)");
  REQUIRE(metrics.step());
  CHECK(metrics.column_text(0) ==
        "train_loss@0=2.5#1 time_step@0=0.25#2 train_loss@1=NaN#3 bytes_sent@1=1.0e+300#4");  // the NaN is still NULL
  Statement keys(db->handle(), "SELECT group_concat(name, ' ') FROM (SELECT name FROM metric_keys ORDER BY id)");
  REQUIRE(keys.step());
  CHECK(keys.column_text(0) == "bytes_sent time_step train_loss");
  Statement source(db->handle(), "SELECT source IS NULL FROM experiments WHERE id = 1");
  REQUIRE(source.step());
  CHECK(source.column_int64(0) == 1);

  // Today's writer appends to the migrated table: a known key keeps its id, a new one is added.
  {
    Recorder recorder(*db);
    auto sink = recorder.metrics_sink(1);
    sink->record({"train_loss", 2, 0, 0, 0.7, 1.5});
    sink->record({"lr", 2, 0, 0, 0.7, 0.1});
  }
  Statement appended(db->handle(),
                     "SELECT group_concat(key || '#' || seq, ' ') FROM "
                     "(SELECT key, seq FROM metrics WHERE step = 2 ORDER BY seq)");
  REQUIRE(appended.step());
  CHECK(appended.column_text(0) == "train_loss#5 lr#6");
  CHECK(summary_of(*db, 1).at("lr").count == 1);
}

TEST_CASE("a read-only open of an older database migrates it first", "[storage][schema][migration]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  write_old_database(path, 2, R"sql(
      INSERT INTO experiments (id, name, file_path, file_hash, created) VALUES (1, 'fmnist', 'f.lua', 'h', 10);
      INSERT INTO runs (id, experiment_id, name, config, swept, seed, repetition, status, created)
        VALUES (1, 1, 'a', '{}', '{}', 1, 0, 'FINISHED', 10);
      INSERT INTO metrics (run_id, key, step, epoch, worker, wall_time, value)
        VALUES (1, 'test_accuracy', 0, 0, 0, 0.5, 0.75);
    )sql");
  auto db = Database::open_read_only(path);
  CHECK(db->read_only());
  CHECK(db->schema_version() == latest_schema_version());
  const auto records = metrics_of(*db, 1, "test_accuracy");
  REQUIRE(records.size() == 1);
  CHECK(records[0].value == 0.75);
}

TEST_CASE("a reader that never writes refuses an older database and leaves it as it was", "[storage][schema][migration]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  write_old_database(path, 2, "INSERT INTO experiments (id, name, file_path, file_hash, created) VALUES (1, 'e', 'f.lua', 'h', 10);");
  CHECK_THROWS_WITH(Database::open_read_only(path, /*migrate_older=*/false),
                    Catch::Contains("schema version 2") && Catch::Contains("migrate it first"));
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  {
    Statement version(raw, "SELECT max(version) FROM schema_version");
    REQUIRE(version.step());
    CHECK(version.column_int64(0) == 2);
  }
  sqlite3_close(raw);
}
