#pragma once
// Thin RAII helpers over the SQLite C API: a prepared statement, a transaction, error checks.
// Every failure becomes a StorageError carrying sqlite3_errmsg, the SQL (or operation) and the code.
#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace laconic::storage {

/// Throws StorageError("<what>: <sqlite3_errmsg> (SQLite code <rc>)", rc) unless rc is SQLITE_OK.
void check(sqlite3* db, int rc, const std::string& what);

/// Runs one or more SQL statements that return no rows we need (DDL, PRAGMA, BEGIN/COMMIT).
void exec(sqlite3* db, const std::string& sql);

/// Seconds since the unix epoch, with sub-second resolution (the unit of every time column).
double unix_now();

/// One prepared statement. Usage: reset(), bind_*(), then step() until it returns false.
class Statement {
 public:
  Statement(sqlite3* db, std::string sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Parameters are numbered from 1, as in SQLite.
  Statement& bind_int64(int index, std::int64_t value);
  /// NaN is bound as NULL (SQLite would store NULL anyway); infinities as REAL.
  Statement& bind_double(int index, double value);
  Statement& bind_text(int index, const std::string& value);
  Statement& bind_null(int index);

  /// Advances; true while a row is available, false when done.
  bool step();
  /// Steps once and expects no row (INSERT / UPDATE / DELETE), then resets.
  void run();
  /// Rewinds and clears the bindings so the statement can be reused.
  void reset();

  /// Columns are numbered from 0, as in SQLite.
  std::int64_t column_int64(int index) const;
  /// NULL reads back as NaN (that is how NaN values are stored).
  double column_double(int index) const;
  /// NULL reads back as "".
  std::string column_text(int index) const;
  bool column_is_null(int index) const;
  /// Reads the columns from `first` on into `out...`, one each in order, by the output's type:
  /// std::int64_t, double, std::string as above, std::optional<std::int64_t> (NULL: nullopt).
  template <class... T>
  void columns(int first, T&... out) const {
    int index = first;
    (read_column(index++, out), ...);
  }

  const std::string& sql() const { return sql_; }
  /// The prepared statement, for reading columns of any type (storage/user_query.hpp read_row).
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  void read_column(int index, std::int64_t& out) const { out = column_int64(index); }
  void read_column(int index, double& out) const { out = column_double(index); }
  void read_column(int index, std::string& out) const { out = column_text(index); }
  void read_column(int index, std::optional<std::int64_t>& out) const;

  /// StorageError naming the parameter and the statement unless `rc` is SQLITE_OK.
  void check_bind(int index, int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

/// BEGIN IMMEDIATE in the constructor; rolls back in the destructor unless commit() ran.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool open_ = true;
};

}  // namespace laconic::storage
