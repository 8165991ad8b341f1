#pragma once
// One SQLite connection to a laconic database: opened in WAL mode with a busy timeout and foreign
// keys on, and migrated to the newest schema (or refused when it is newer than this laconic).
#include <memory>
#include <mutex>
#include <string>

struct sqlite3;

namespace laconic::storage {

/// Owns a sqlite3 connection. Non-copyable; close by destroying it.
class Database {
 public:
  /// Milliseconds a statement waits for another connection's lock before failing with SQLITE_BUSY.
  static constexpr int kBusyTimeoutMs = 5000;

  /// Opens (creating if missing) the database at `path` (":memory:" for a private in-memory one)
  /// and migrates it to latest_schema_version(). StorageError if the file's schema is newer;
  /// ConfigError if `path` is a directory.
  static std::unique_ptr<Database> open(const std::string& path);
  /// Opens an existing database read-only (SQLITE_OPEN_READONLY); StorageError if it is missing,
  /// not a laconic database, or of a newer schema. A database of an older schema is first migrated
  /// (opened with open()). Reads see what writers have committed. On a read-only directory or
  /// medium, where SQLite cannot create the WAL's shared-memory file, it opens the file as
  /// immutable instead (an archive: nobody writes it). ConfigError if `path` is a directory.
  /// A read leaves the directory as it found it: the WAL files SQLite makes for a reader are
  /// removed when it closes, unless they were there before (a writer's) or another connection
  /// opened the file meanwhile. With `migrate_older` false, a database of an older schema is
  /// refused (ConfigError saying how to migrate it) instead: the caller never writes.
  static std::unique_ptr<Database> open_read_only(const std::string& path, bool migrate_older = true);

  /// Milliseconds a statement of this connection waits for another's lock before SQLITE_BUSY
  /// (kBusyTimeoutMs unless set).
  void set_busy_timeout(int milliseconds);

  /// Runs PRAGMA quick_check; StorageError (SQLITE_CORRUPT) naming the file, the first problem
  /// and how to recover when the file is damaged.
  void check_integrity();

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// The raw connection, for queries this library does not offer.
  sqlite3* handle() { return db_; }
  /// The schema version the database had once opened (after migration, for open()).
  int schema_version() const { return schema_version_; }
  /// The path it was opened with, for messages.
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  /// Held by every writer on this connection (Recorder, SqliteSink) around its transactions, so
  /// several sinks of one connection may be used from different threads.
  std::mutex& write_mutex() { return write_mutex_; }

 private:
  Database(sqlite3* db, std::string path, bool read_only);

  sqlite3* db_;
  std::string path_;
  bool read_only_;
  /// A reader that found no -wal or -shm file next to the database: whatever it leaves there,
  /// its destructor removes.
  bool tidy_wal_files_ = false;
  int schema_version_ = 0;
  std::mutex write_mutex_;
};

/// Removes the -wal and -shm files of the database at `path` when no connection has it open (the
/// last one to close removes them; a read-only one cannot): what read-only readers that made
/// them call once they have all closed. Writes nothing.
void remove_unused_wal_files(const std::string& path);

/// What a user should read for a StorageError about the database at `path`: what went wrong,
/// in words, naming the file, and what to do (free space, wait for the lock, recover a damaged
/// file), without the SQL text; SQLite's own words follow in parentheses. Messages laconic wrote
/// itself (no "(SQLite code N)" in them) and errors of other codes are returned as they are.
std::string explain_storage_error(int code, const std::string& message, const std::string& path);

}  // namespace laconic::storage
