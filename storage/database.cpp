#include "storage/database.hpp"

#include <filesystem>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/migrations.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// Opens or throws; a failed sqlite3_open_v2 still allocates a handle that must be closed.
sqlite3* open_connection(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message =
        str_cat("cannot open database ", path, ": ", db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                " (SQLite code ", rc, ")");
    sqlite3_close(db);
    throw StorageError(message, rc);
  }
  sqlite3_extended_result_codes(db, 0);
  return db;
}

}  // namespace

Database::Database(sqlite3* db, std::string path, bool read_only)
    : db_(db), path_(std::move(path)), read_only_(read_only) {}

Database::~Database() { sqlite3_close_v2(db_); }

std::unique_ptr<Database> Database::open(const std::string& path) {
  std::unique_ptr<Database> database(
      new Database(open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), path, false));
  sqlite3* db = database->db_;
  check(db, sqlite3_busy_timeout(db, kBusyTimeoutMs), str_cat("while setting the busy timeout of ", path));
  exec(db, "PRAGMA foreign_keys = ON");
  // WAL lets readers (laconic runs, reports) work while a sweep writes. An in-memory database
  // stays in journal mode "memory", which is all it can have.
  exec(db, "PRAGMA journal_mode = WAL");
  // NORMAL is durable across application crashes in WAL mode; only power loss may drop the last
  // commits, which is the trade the batched writer makes anyway.
  exec(db, "PRAGMA synchronous = NORMAL");
  database->schema_version_ = migrate(db, path);
  return database;
}

std::unique_ptr<Database> Database::open_read_only(const std::string& path) {
  if (path != ":memory:" && !std::filesystem::exists(path))
    throw StorageError(str_cat("database ", path, " does not exist (nothing has been recorded there yet)"),
                       SQLITE_CANTOPEN);
  std::unique_ptr<Database> database(new Database(open_connection(path, SQLITE_OPEN_READONLY), path, true));
  sqlite3* db = database->db_;
  check(db, sqlite3_busy_timeout(db, kBusyTimeoutMs), str_cat("while setting the busy timeout of ", path));
  const int version = read_schema_version(db, path);
  if (version == 0) throw StorageError(str_cat("database ", path, " is not a laconic database (it is empty)"), -1);
  refuse_newer(version, path);
  if (version < latest_schema_version()) {
    // The read commands speak only the newest schema. Migrate the file, as the next writer
    // would, and read it then; a file this process may not write cannot be read.
    database.reset();
    try {
      Database::open(path);
    } catch (StorageError& e) {
      e.add_context(str_cat("database ", path, " has schema version ", version, " and this laconic reads version ",
                            latest_schema_version(), "; migrating it failed"));
      throw;
    }
    return open_read_only(path);
  }
  database->schema_version_ = version;
  return database;
}

}  // namespace laconic::storage
