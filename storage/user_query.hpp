#pragma once
// A query typed by the user (`laconic query "SQL"`), run so that it cannot change anything: one
// statement only, checked by an authorizer that allows reading and nothing else, by
// sqlite3_stmt_readonly, and on a connection with PRAGMA query_only = ON.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/database.hpp"

struct sqlite3_stmt;

namespace laconic::storage {

/// One value of a result row, typed as SQLite returned it.
struct Cell {
  /// Json: `text` is a JSON document (written as such in JSON output, as text elsewhere).
  enum class Type { Null, Integer, Real, Text, Blob, Json };
  Type type = Type::Null;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;  ///< Text, or the bytes of a Blob
};

/// Reads the `n` columns of the current row of `stmt` into `row` (resized to n).
void read_row(sqlite3_stmt* stmt, int n, std::vector<Cell>& row);

/// A prepared read-only statement of the user's; step through it with next().
class UserQuery {
 public:
  /// ConfigError (the user can fix it) when `sql` is empty, holds more than one statement, does
  /// not parse, or would write or change the connection (INSERT, UPDATE, DELETE, DROP, CREATE,
  /// ATTACH, DETACH, a PRAGMA that sets something, BEGIN, ...); the message names what was
  /// refused. Sets PRAGMA query_only = ON on `db`'s connection for the rest of its life. The
  /// query may run `time_limit` seconds in all (0: no limit); past it next() stops it with a
  /// ConfigError that says so (a recursive CTE without end, a cross join of the metrics).
  /// No value of the result (a string, a blob) may hold more than `max_value_bytes` bytes
  /// (SQLITE_LIMIT_LENGTH; 0: SQLite's own limit): past it next() throws a ConfigError that says so.
  UserQuery(Database& db, const std::string& sql, double time_limit = 0, std::int64_t max_value_bytes = 0);
  ~UserQuery();
  UserQuery(const UserQuery&) = delete;
  UserQuery& operator=(const UserQuery&) = delete;

  /// Result column names, in order.
  const std::vector<std::string>& columns() const { return columns_; }
  /// Fills `row` with the next result row; false when there are no more. StorageError (with
  /// SQLite's message) if a step fails.
  bool next(std::vector<Cell>& row);

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::vector<std::string> columns_;
  std::string refused_;  ///< what the authorizer refused, for the message
  double time_limit_ = 0;
  std::int64_t max_value_bytes_ = 0;
  int length_limit_before_ = -1;  ///< the connection's SQLITE_LIMIT_LENGTH, restored at the end
  /// When the limit is reached, in steady-clock seconds (what the progress handler compares).
  double deadline_ = 0;
  std::pair<double, bool> clock_{0, false};  ///< the deadline, and whether the handler hit it
};

}  // namespace laconic::storage
