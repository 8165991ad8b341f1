#include "storage/statement.hpp"

#include <chrono>
#include <cmath>
#include <iostream>

#include <sqlite3.h>

#include "engine/core/error.hpp"

namespace laconic::storage {

void check(sqlite3* db, int rc, const std::string& what) {
  if (rc == SQLITE_OK) return;
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw StorageError(str_cat(what, ": ", message, " (SQLite code ", rc, ")"), rc);
}

void exec(sqlite3* db, const std::string& sql) {
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) check(db, rc, str_cat("while running '", sql, "'"));
}

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Statement::Statement(sqlite3* db, std::string sql) : db_(db), sql_(std::move(sql)) {
  const int rc = sqlite3_prepare_v2(db_, sql_.c_str(), -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) check(db_, rc, str_cat("while preparing '", sql_, "'"));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

// The message is built only on failure: binding is on the writer's per-batch path.
void Statement::check_bind(int index, int rc) {
  if (rc != SQLITE_OK) check(db_, rc, str_cat("while binding parameter ", index, " of '", sql_, "'"));
}

Statement& Statement::bind_int64(int index, std::int64_t value) {
  check_bind(index, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_double(int index, double value) {
  if (std::isnan(value)) return bind_null(index);
  check_bind(index, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind_text(int index, const std::string& value) {
  check_bind(index, sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bind_null(int index) {
  check_bind(index, sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Keep SQLite's message from before the reset; the statement must be reset before reuse.
  const std::string message = str_cat("while running '", sql_, "': ", sqlite3_errmsg(db_), " (SQLite code ", rc, ")");
  sqlite3_reset(stmt_);
  throw StorageError(message, rc);
}

void Statement::run() {
  if (step()) {
    reset();
    throw StorageError(str_cat("'", sql_, "' returned a row where none was expected"), -1);
  }
  reset();
}

void Statement::reset() {
  // sqlite3_reset repeats the error of the last step, which step() already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::column_int64(int index) const { return sqlite3_column_int64(stmt_, index); }

double Statement::column_double(int index) const {
  if (column_is_null(index)) return std::nan("");
  return sqlite3_column_double(stmt_, index);
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)));
}

bool Statement::column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

void Statement::read_column(int index, std::optional<std::int64_t>& out) const {
  out = column_is_null(index) ? std::nullopt : std::optional<std::int64_t>(column_int64(index));
}

Transaction::Transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!open_) return;
  // SQLite rolls a transaction back by itself after some failures (a full disk, an I/O error):
  // then there is nothing left to roll back, and nothing to report.
  if (sqlite3_get_autocommit(db_) != 0) return;
  // Destructors never throw; a failed rollback leaves SQLite to roll back when the connection closes.
  const int rc = sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK)
    std::cerr << "laconic: ROLLBACK failed: " << sqlite3_errmsg(db_) << " (SQLite code " << rc << ")\n";
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  open_ = false;
}

}  // namespace laconic::storage
