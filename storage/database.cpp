#include "storage/database.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/migrations.hpp"
#include "storage/sqlite_pages.hpp"
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

void refuse_directory(const std::string& path) {
  std::error_code error;
  if (path != ":memory:" && std::filesystem::is_directory(path, error))
    throw ConfigError(str_cat("--db ", path, " is a directory; give the path of a database file, e.g. ",
                              (std::filesystem::path(path) / "laconic.db").string()));
}

// Reads the schema version; the first statement shows whether the file can be read at all.
int schema_version_of(sqlite3* db, const std::string& path) { return read_schema_version(db, path); }

/// PRAGMA journal_mode = WAL. On a new file that another process is opening at the same moment
/// (two controllers started together), SQLite answers SQLITE_BUSY at once, without calling the
/// busy handler: asked again every 10 ms for up to the busy timeout.
void enable_wal(sqlite3* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(Database::kBusyTimeoutMs);
  while (true) {
    try {
      exec(db, "PRAGMA journal_mode = WAL");
      return;
    } catch (const StorageError& e) {
      if ((e.code() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string explain_storage_error(int code, const std::string& message, const std::string& path) {
  // laconic's own messages already say what happened and what to do; only SQLite's are reworded.
  if (message.find("(SQLite code ") == std::string::npos) return message;
  // SQLite's own words, without the SQL text around them: "database disk image is malformed".
  const std::string sqlite_words = code > 0 ? sqlite3_errstr(code) : "";
  auto with = [&](const std::string& text) {
    return sqlite_words.empty() ? text : str_cat(text, " (SQLite: ", sqlite_words, ", code ", code, ")");
  };
  switch (code & 0xff) {
    case SQLITE_NOTADB:
      // A laconic database whose first page was overwritten (its header zeroed) reads so too, and
      // its other pages still hold its rows.
      return with(str_cat("database ", path,
                          " is not an SQLite database, or its header is damaged (or it is encrypted); if it is a "
                          "laconic database whose first page was overwritten, `laconic recover --from-damaged ",
                          path, " recovered.db` copies what its other pages hold into a new file; else give --db "
                          "the path of a laconic database"));
    case SQLITE_CORRUPT:
      return with(str_cat("database ", path, " is damaged; copy what can still be read into a new database with ",
                          "`laconic recover --from-damaged ", path, " recovered.db` and use --db recovered.db"));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // Without a duration: connections wait differently (5 s by default, 50 ms for `laconic run`'s
      // controller, whose callers say how long their retries lasted).
      return with(str_cat("database ", path,
                          " stayed locked by another process for longer than this connection waits; stop the other "
                          "writer (or let it finish) and try again"));
    case SQLITE_FULL:
      return with(str_cat("the disk holding database ", path, " is full; free space, then `laconic run --resume ",
                          "FILE.lua --db ", path, "` continues"));
    case SQLITE_READONLY:
      return with(str_cat("database ", path,
                          " cannot be written (a read-only file, directory or medium); copy it "
                          "somewhere writable, or give --db another file"));
    case SQLITE_CANTOPEN:
      return with(str_cat("cannot open database ", path, ": check that its directory exists and may be written"));
    case SQLITE_IOERR:
      return with(str_cat("input/output error on database ", path,
                          ": the disk or file system failed; check it, "
                          "then run again"));
    default:
      return message;
  }
}

Database::Database(sqlite3* db, std::string path, bool read_only)
    : db_(db), path_(std::move(path)), read_only_(read_only) {}

Database::~Database() {
  sqlite3_close_v2(db_);
  if (tidy_wal_files_) remove_unused_wal_files(path_);
}

void remove_unused_wal_files(const std::string& path) {
  // A read-only connection may not remove the WAL files it made. The last connection to close
  // a WAL database does: open one that may write, and close it. It writes nothing (the WAL is
  // empty); if another connection has the file open, the files stay, as they must.
  sqlite3* tidy = nullptr;
  if (sqlite3_open_v2(path.c_str(), &tidy, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK)
    sqlite3_exec(tidy, "SELECT 1 FROM sqlite_master LIMIT 1", nullptr, nullptr, nullptr);
  sqlite3_close_v2(tidy);  // a null handle is a no-op
}

namespace {

// A write-ahead log whose frames stop checking before its end: SQLite reads up to the first bad
// frame and, at the next checkpoint, drops the rest for good. Refused before anything writes,
// the log kept as DB-wal.damaged. Scanned twice, so that a frame another writer was appending
// while it was read is not taken for damage.
void refuse_damaged_wal(const std::string& path) {
  const std::string wal = path + "-wal";
  if (path == ":memory:" || !std::filesystem::exists(wal)) return;
  pages::WalScan scan = pages::scan_wal(wal);
  if (!scan.damaged()) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pages::WalScan again = pages::scan_wal(wal);
  if (!again.damaged() || again.first_damaged != scan.first_damaged) return;
  scan = again;
  const std::string kept = wal + ".damaged";
  std::error_code ignored;
  if (!std::filesystem::exists(kept)) std::filesystem::copy_file(wal, kept, ignored);
  throw StorageError(
      str_cat("database ", path, ": its write-ahead log ", wal, " is damaged at frame ", scan.first_damaged, ": SQLite ",
              "reads its first ", scan.sqlite_frames, " frames and would drop the ",
              scan.valid_frames - scan.sqlite_frames, " valid frames after the damage (", scan.damaged_frames,
              " damaged) at its next write; nothing was written (the log is kept as ", kept, "). `laconic recover ",
              "--from-damaged ", path, " recovered.db` copies every row the file and all of the log's valid frames ",
              "hold into a new database; use --db recovered.db"),
      SQLITE_CORRUPT);
}

}  // namespace

std::unique_ptr<Database> Database::open(const std::string& path) {
  refuse_directory(path);
  refuse_damaged_wal(path);
  std::unique_ptr<Database> database(
      new Database(open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), path, false));
  sqlite3* db = database->db_;
  check(db, sqlite3_busy_timeout(db, kBusyTimeoutMs), str_cat("while setting the busy timeout of ", path));
  exec(db, "PRAGMA foreign_keys = ON");
  // WAL lets readers (laconic runs, reports) work while a sweep writes. An in-memory database
  // stays in journal mode "memory", which is all it can have.
  enable_wal(db);
  // NORMAL is durable across application crashes in WAL mode; only power loss may drop the last
  // commits, which is the trade the batched writer makes anyway.
  exec(db, "PRAGMA synchronous = NORMAL");
  database->schema_version_ = migrate(db, path);
  return database;
}

std::unique_ptr<Database> Database::open_read_only(const std::string& path, bool migrate_older) {
  refuse_directory(path);
  if (path != ":memory:" && !std::filesystem::exists(path))
    throw StorageError(str_cat("database ", path, " does not exist (nothing has been recorded there yet)"),
                       SQLITE_CANTOPEN);
  const bool wal_files_before =
      path != ":memory:" && (std::filesystem::exists(path + "-wal") || std::filesystem::exists(path + "-shm"));
  std::unique_ptr<Database> database(new Database(open_connection(path, SQLITE_OPEN_READONLY), path, true));
  database->tidy_wal_files_ = path != ":memory:" && !wal_files_before;
  sqlite3* db = database->db_;
  check(db, sqlite3_busy_timeout(db, kBusyTimeoutMs), str_cat("while setting the busy timeout of ", path));
  int version = 0;
  try {
    version = schema_version_of(db, path);
  } catch (const StorageError& e) {
    // A WAL database in a directory this process may not write: SQLite cannot make the -shm file.
    // Read it as the archive it is.
    const int code = e.code() & 0xff;
    if (path == ":memory:" || (code != SQLITE_CANTOPEN && code != SQLITE_READONLY)) throw;
    database.reset(new Database(
        open_connection(str_cat("file:", path, "?immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI), path, true));
    db = database->db_;  // immutable: it makes no WAL files, and there is nothing to tidy
    version = schema_version_of(db, path);
  }
  if (version == 0) throw StorageError(str_cat("database ", path, " is not a laconic database (it is empty)"), -1);
  refuse_newer(version, path);
  if (version < latest_schema_version() && !migrate_older)
    throw ConfigError(str_cat("database ", path, " has schema version ", version, " and this laconic reads version ",
                              latest_schema_version(),
                              "; this command never writes: migrate it first with `laconic runs --db ", path, "`"));
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

void Database::set_busy_timeout(int milliseconds) {
  check(db_, sqlite3_busy_timeout(db_, milliseconds), str_cat("while setting the busy timeout of ", path_));
}

void Database::check_integrity() {
  std::string first;
  std::size_t problems = 0;
  try {
    Statement check(db_, "PRAGMA quick_check");
    while (check.step()) {
      const std::string line = check.column_text(0);
      if (line == "ok") continue;
      if (first.empty()) first = line;
      ++problems;
    }
  } catch (const StorageError& e) {
    // A page damaged where the check itself must read (the schema, a table's root) stops it.
    if (e.code() != SQLITE_CORRUPT && e.code() != SQLITE_NOTADB) throw;
    first = e.what();
    problems = 1;
  }
  if (problems == 0) return;
  throw StorageError(str_cat("database ", path_, " is damaged (quick_check found ", problems,
                             problems == 1 ? " problem" : " problems", ", the first: ", first,
                             "); nothing was trained. Copy what can still be read into a new database "
                             "with `laconic recover --from-damaged ",
                             path_, " recovered.db` and run with --db recovered.db"),
                     SQLITE_CORRUPT);
}

}  // namespace laconic::storage
