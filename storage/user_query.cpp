#include "storage/user_query.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>
#include <set>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// Pragmas that only report something. Those marked "no argument" set something when given one
// (`PRAGMA user_version = 5`), so they pass only bare.
const std::set<std::string>& introspection_pragmas() {
  static const std::set<std::string> names{"table_info",      "table_xinfo",   "table_list",       "index_list",
                                           "index_info",      "index_xinfo",   "foreign_key_list", "integrity_check",
                                           "quick_check",     "function_list", "pragma_list",      "collation_list",
                                           "compile_options", "database_list"};
  return names;
}
const std::set<std::string>& bare_pragmas() {
  static const std::set<std::string> names{"user_version", "schema_version", "application_id", "page_count",
                                           "page_size",    "freelist_count", "journal_mode",   "encoding",
                                           "data_version", "query_only"};
  return names;
}

std::string text_or(const char* text, const char* otherwise) { return text != nullptr ? text : otherwise; }

// What an action is, in the words of SQL, for the refusal message.
std::string describe(int action, const char* a, const char* b) {
  switch (action) {
    case SQLITE_INSERT:
      return str_cat("INSERT into ", text_or(a, "?"));
    case SQLITE_UPDATE:
      return str_cat("UPDATE of ", text_or(a, "?"));
    case SQLITE_DELETE:
      return str_cat("DELETE from ", text_or(a, "?"));
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_TABLE:
      return str_cat("DROP TABLE ", text_or(a, "?"));
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:
      return str_cat("DROP INDEX ", text_or(a, "?"));
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_TEMP_VIEW:
      return str_cat("DROP VIEW ", text_or(a, "?"));
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_TEMP_TRIGGER:
      return str_cat("DROP TRIGGER ", text_or(a, "?"));
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_TEMP_TABLE:
      return str_cat("CREATE TABLE ", text_or(a, "?"));
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TEMP_INDEX:
      return str_cat("CREATE INDEX ", text_or(a, "?"));
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TEMP_VIEW:
      return str_cat("CREATE VIEW ", text_or(a, "?"));
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_TEMP_TRIGGER:
      return str_cat("CREATE TRIGGER ", text_or(a, "?"));
    case SQLITE_ALTER_TABLE:
      return str_cat("ALTER TABLE ", text_or(b, "?"));
    case SQLITE_ATTACH:
      return str_cat("ATTACH ", text_or(a, "?"));
    case SQLITE_DETACH:
      return str_cat("DETACH ", text_or(a, "?"));
    case SQLITE_PRAGMA:
      return b != nullptr ? str_cat("PRAGMA ", a, " = ", b) : str_cat("PRAGMA ", text_or(a, "?"));
    case SQLITE_TRANSACTION:
      return str_cat(text_or(a, "BEGIN"), " (transactions)");
    case SQLITE_SAVEPOINT:
      return "SAVEPOINT";
    case SQLITE_REINDEX:
      return "REINDEX";
    case SQLITE_ANALYZE:
      return "ANALYZE";
    case SQLITE_CREATE_VTABLE:
      return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_VTABLE:
      return "DROP VIRTUAL TABLE";
    case SQLITE_FUNCTION:
      return str_cat("the function ", text_or(b, "?"), "()");
    default:
      return str_cat("an operation that is not a read (SQLite action code ", action, ")");
  }
}

// Functions that reach outside the database (load a library, read or write files, swap a
// tokenizer's code pointer): refused even though they read nothing of laconic's.
bool refused_function(const std::string& name) {
  static const std::set<std::string> names{"load_extension", "fts3_tokenizer", "readfile",       "writefile",
                                           "edit",           "zipfile",        "sqlar_compress", "sqlar_uncompress"};
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return names.count(lower) != 0;
}

// Allows reading only; anything else is denied at prepare time and remembered for the message.
int authorize(void* refused, int action, const char* a, const char* b, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (!refused_function(text_or(b, ""))) return SQLITE_OK;
      break;
    case SQLITE_PRAGMA: {
      const std::string name = text_or(a, "");
      if (introspection_pragmas().count(name) != 0) return SQLITE_OK;
      if (b == nullptr && bare_pragmas().count(name) != 0) return SQLITE_OK;
      break;
    }
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE: {
      // DDL first asks to write the schema table, then asks for itself (SQLITE_DROP_TABLE, ...).
      // Let the first pass so that the second is refused and named; a statement that somehow
      // got no second question is still stopped by sqlite3_stmt_readonly and query_only.
      const std::string table = text_or(a, "");
      if (table == "sqlite_master" || table == "sqlite_temp_master" || table == "sqlite_schema") {
        auto& message = *static_cast<std::string*>(refused);
        if (message.empty()) message = "a change of the schema";
        return SQLITE_OK;
      }
      break;
    }
    default:
      break;
  }
  auto& message = *static_cast<std::string*>(refused);
  if (message == "a change of the schema") message.clear();  // the specific DDL says more
  if (message.empty()) message = describe(action, a, b);
  return SQLITE_DENY;
}

bool only_space(const char* text) {
  for (; *text != '\0'; ++text)
    if (!std::isspace(static_cast<unsigned char>(*text)) && *text != ';') return false;
  return true;
}

}  // namespace

void read_row(sqlite3_stmt* stmt, int n, std::vector<Cell>& row) {
  row.resize(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    Cell& cell = row[static_cast<std::size_t>(c)];
    cell.text.clear();
    switch (sqlite3_column_type(stmt, c)) {
      case SQLITE_INTEGER:
        cell.type = Cell::Type::Integer;
        cell.integer = sqlite3_column_int64(stmt, c);
        break;
      case SQLITE_FLOAT:
        cell.type = Cell::Type::Real;
        cell.real = sqlite3_column_double(stmt, c);
        break;
      case SQLITE_TEXT:
        cell.type = Cell::Type::Text;
        cell.text.assign(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)));
        break;
      case SQLITE_BLOB: {
        cell.type = Cell::Type::Blob;
        const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt, c));
        if (bytes != nullptr) cell.text.assign(bytes, static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)));
        break;
      }
      default:
        cell.type = Cell::Type::Null;
    }
  }
}

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// SQLite calls it every few thousand virtual-machine steps; non-zero interrupts the statement.
int past_deadline(void* self) {
  auto* query = static_cast<std::pair<double, bool>*>(self);
  if (steady_seconds() < query->first) return 0;
  query->second = true;
  return 1;
}

}  // namespace

UserQuery::UserQuery(Database& db, const std::string& sql, double time_limit, std::int64_t max_value_bytes)
    : db_(db), time_limit_(time_limit), max_value_bytes_(max_value_bytes) {
  sqlite3* handle = db_.handle();
  exec(handle, "PRAGMA query_only = ON");
  if (max_value_bytes_ > 0)
    length_limit_before_ = sqlite3_limit(
        handle, SQLITE_LIMIT_LENGTH,
        static_cast<int>(std::min<std::int64_t>(max_value_bytes_, std::numeric_limits<int>::max())));
  sqlite3_set_authorizer(handle, authorize, &refused_);
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(handle, sql.c_str(), static_cast<int>(sql.size()), &stmt_, &tail);
  if (rc != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(handle);
    sqlite3_set_authorizer(handle, nullptr, nullptr);
    // SQLite refuses a write to a view (`metrics`) before the authorizer hears of it.
    const std::string kView = "cannot modify ";
    const std::size_t because = message.find(" because it is a view");
    if (refused_.empty() && message.rfind(kView, 0) == 0 && because != std::string::npos)
      refused_ = str_cat("writing to the view ", message.substr(kView.size(), because - kView.size()));
    if (!refused_.empty())
      throw ConfigError(str_cat("laconic query only reads: ", refused_,
                                " is refused (use the sqlite3 shell on a copy to change a database)"));
    throw ConfigError(str_cat("cannot run the query: ", message));
  }
  if (stmt_ == nullptr) {
    sqlite3_set_authorizer(handle, nullptr, nullptr);
    throw ConfigError("the query is empty; give one SQL statement, e.g. \"SELECT * FROM runs\"");
  }
  // A second statement after the first is refused whatever it is, so nothing can ride along.
  // Preparing the rest tells a trailing comment (no statement) from a statement.
  if (tail != nullptr && !only_space(tail)) {
    sqlite3_stmt* second = nullptr;
    const int second_rc = sqlite3_prepare_v2(handle, tail, -1, &second, nullptr);
    const bool more = second_rc != SQLITE_OK || second != nullptr;
    sqlite3_finalize(second);
    if (more) {
      sqlite3_finalize(stmt_);
      sqlite3_set_authorizer(handle, nullptr, nullptr);
      std::string first(sql.c_str(), static_cast<std::size_t>(tail - sql.c_str()));
      throw ConfigError(str_cat("laconic query runs one statement; found more after '", first, "'"));
    }
  }
  // The authorizer has seen every table and function; this is the second opinion.
  if (sqlite3_stmt_readonly(stmt_) == 0) {
    sqlite3_finalize(stmt_);
    sqlite3_set_authorizer(handle, nullptr, nullptr);
    throw ConfigError("laconic query only reads: the statement would write to the database and is refused");
  }
  const int n = sqlite3_column_count(stmt_);
  for (int c = 0; c < n; ++c) columns_.push_back(text_or(sqlite3_column_name(stmt_, c), ""));
}

UserQuery::~UserQuery() {
  if (length_limit_before_ >= 0) sqlite3_limit(db_.handle(), SQLITE_LIMIT_LENGTH, length_limit_before_);
  sqlite3_progress_handler(db_.handle(), 0, nullptr, nullptr);
  sqlite3_finalize(stmt_);
  sqlite3_set_authorizer(db_.handle(), nullptr, nullptr);
}

bool UserQuery::next(std::vector<Cell>& row) {
  if (time_limit_ > 0 && deadline_ == 0) {  // the clock starts at the first row asked for
    deadline_ = steady_seconds() + time_limit_;
    clock_ = {deadline_, false};
    sqlite3_progress_handler(db_.handle(), 10000, past_deadline, &clock_);
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_DONE) return false;
  if (rc != SQLITE_ROW) {
    const std::string message = sqlite3_errmsg(db_.handle());
    if (rc == SQLITE_INTERRUPT && clock_.second)
      throw ConfigError(str_cat("the query ran for more than ", time_limit_,
                                " s and was stopped (--timeout SECONDS allows more; 0 for no limit)"));
    if (rc == SQLITE_TOOBIG)
      throw ConfigError(str_cat("a value of the result is larger than ",
                                max_value_bytes_ > 0 ? str_cat(max_value_bytes_, " bytes (--max-bytes") : "SQLite allows (",
                                "); the query was stopped"));
    // Refusals can also surface at step time (a statement re-prepared after a schema change).
    if (!refused_.empty()) throw ConfigError(str_cat("laconic query only reads: ", refused_, " is refused"));
    throw StorageError(str_cat("while running the query: ", message, " (SQLite code ", rc, ")"), rc);
  }
  read_row(stmt_, static_cast<int>(columns_.size()), row);
  return true;
}

}  // namespace laconic::storage
