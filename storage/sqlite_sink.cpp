#include "storage/sqlite_sink.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <sqlite3.h>

#include "engine/core/error.hpp"

namespace laconic::storage {
namespace {

// What one batch adds to a run_summary row. min / max / sum / count are over the non-NaN
// values; NaNs are counted apart, and `last` is the last value whatever it is.
struct BatchSummary {
  double last = 0;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  std::int64_t count = 0;
  std::int64_t nan_count = 0;

  void add(double value) {
    last = value;
    if (std::isnan(value)) {
      ++nan_count;
      return;
    }
    min = count == 0 ? value : std::fmin(min, value);
    max = count == 0 ? value : std::fmax(max, value);
    sum += value;
    ++count;
  }
};

// NULL min/max means "no non-NaN value yet", so a side that is NULL must not win; a NULL sum
// (from inf + -inf) stays NULL, as NaN would in plain arithmetic.
const char* const kUpsertSummary = R"sql(
INSERT INTO run_summary (run_id, key, last, min, max, sum, count, nan_count)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (run_id, key) DO UPDATE SET
  last = excluded.last,
  min = CASE WHEN run_summary.min IS NULL THEN excluded.min
             WHEN excluded.min IS NULL THEN run_summary.min
             ELSE min(run_summary.min, excluded.min) END,
  max = CASE WHEN run_summary.max IS NULL THEN excluded.max
             WHEN excluded.max IS NULL THEN run_summary.max
             ELSE max(run_summary.max, excluded.max) END,
  sum = run_summary.sum + excluded.sum,
  count = run_summary.count + excluded.count,
  nan_count = run_summary.nan_count + excluded.nan_count
)sql";

// The connection, once laconic_batch is registered on it. Under the write lock: sinks of one
// connection may be made from several threads, and the check-then-register must not race.
sqlite3* with_batch_table(Database& db) {
  std::lock_guard<std::mutex> lock(db.write_mutex());
  register_batch_table(db.handle());
  return db.handle();
}

}  // namespace

bool is_transient(const StorageError& error) {
  switch (error.code() & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return true;
    default:
      return false;
  }
}

bool is_lock(const StorageError& error) {
  const int code = error.code() & 0xff;
  return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

SqliteSink::SqliteSink(Database& db, std::int64_t run_id, std::size_t batch_rows, OnWriteFailure on_failure)
    : db_(db),
      run_id_(run_id),
      batch_rows_(batch_rows == 0 ? 1 : batch_rows),
      on_failure_(on_failure),
      insert_metrics_(with_batch_table(db),
                      "INSERT INTO metric_values (run_id, key_id, step, epoch, worker, wall_time, value) "
                      "SELECT ?1, key_id, step, epoch, worker, wall_time, value FROM laconic_batch(?2)"),
      add_key_(db.handle(), "INSERT OR IGNORE INTO metric_keys (name) VALUES (?1)"),
      find_key_(db.handle(), "SELECT id FROM metric_keys WHERE name = ?1"),
      upsert_summary_(db.handle(), kUpsertSummary) {
  pending_.reserve(batch_rows_);
}

SqliteSink::~SqliteSink() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return;
  if (held_) {
    std::cerr << "laconic: dropped " << pending_.size() << " metric records of run " << run_id_
              << ": its claim was never written\n";
    return;
  }
  try {
    commit_locked();
  } catch (const std::exception& e) {
    // Destructors never throw; say what was lost instead.
    std::cerr << "laconic: lost " << pending_.size() << " metric records of run " << run_id_ << ": " << e.what()
              << "\n";
  }
}

std::uint32_t SqliteSink::intern(const std::string& key) {
  const auto n = static_cast<std::uint32_t>(keys_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t k = (last_key_ + 1 + i) % n;
    if (keys_[k] == key) return last_key_ = k;
  }
  keys_.push_back(key);
  key_ids_.push_back(-1);
  return last_key_ = n;
}

void SqliteSink::record(const MetricRecord& record) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back({intern(record.key), record.worker, record.step, record.epoch, record.wall_time, record.value});
  if (pending_.size() < batch_rows_ || held_) return;
  if (on_failure_ == OnWriteFailure::Throw) {
    commit_locked();
  } else if (!failing_since_ || Clock::now() >= next_attempt_) {
    try_commit_locked();
  }
}

void SqliteSink::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty() || held_) return;
  if (on_failure_ == OnWriteFailure::Throw)
    commit_locked();
  else
    try_commit_locked();
}

void SqliteSink::write_in_open_transaction() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pending_.empty()) commit_locked(false);
}

void SqliteSink::try_commit_locked() {
  try {
    commit_locked();
    failing_since_.reset();
    backoff_seconds_ = 0.1;
    last_error_.clear();
    last_error_code_ = 0;
  } catch (const StorageError& e) {
    if (!is_transient(e)) throw;
    const auto now = Clock::now();
    if (!failing_since_) failing_since_ = now;
    last_error_ = e.what();
    last_error_code_ = e.code();
    next_attempt_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(backoff_seconds_));
    backoff_seconds_ = std::min(backoff_seconds_ * 2, 5.0);
  }
}

std::size_t SqliteSink::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

double SqliteSink::outage_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failing_since_ ? std::chrono::duration<double>(Clock::now() - *failing_since_).count() : 0.0;
}

std::string SqliteSink::last_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_error_;
}

int SqliteSink::last_error_code() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_error_code_;
}

std::vector<MetricRecord> SqliteSink::take_pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<MetricRecord> out;
  out.reserve(pending_.size());
  for (const BatchRow& r : pending_) out.push_back({keys_[r.key], r.step, r.epoch, r.worker, r.wall_time, r.value});
  pending_.clear();
  return out;
}

void SqliteSink::hold(bool held) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_ = held;
}

bool SqliteSink::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

void SqliteSink::resolve_key_ids(std::vector<std::size_t>& resolved) {
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    if (key_ids_[k] >= 0) continue;
    add_key_.reset();
    add_key_.bind_text(1, keys_[k]);
    add_key_.run();
    find_key_.reset();
    find_key_.bind_text(1, keys_[k]);
    if (!find_key_.step())
      throw StorageError(str_cat("metric key '", keys_[k], "' is missing from metric_keys right after adding it"), -1);
    key_ids_[k] = find_key_.column_int64(0);
    find_key_.reset();
    resolved.push_back(k);
  }
}

void SqliteSink::commit_locked(bool own_transaction) {
  std::lock_guard<std::mutex> write_lock(db_.write_mutex());
  // Per key of this sink (indexed like keys_), what the batch adds to its run_summary row.
  std::vector<BatchSummary> summaries(keys_.size());
  std::vector<bool> seen(keys_.size(), false);
  std::vector<std::size_t> resolved;
  try {
    std::optional<Transaction> transaction;
    if (own_transaction) transaction.emplace(db_.handle());
    // A key added in a transaction that rolls back does not exist: forget its id (below).
    resolve_key_ids(resolved);
    // One INSERT ... SELECT per batch: SQLite reads the rows straight from pending_ through the
    // laconic_batch table (storage/batch_table.hpp), with no bind/step/reset per row.
    // Rows go in grouped by key, each key's rows in their recorded order (a counting sort), so
    // consecutive index entries (run_id, key, step) land on the same leaf page instead of
    // jumping between one page per key. Per key, ids still grow with recording order, which is
    // all that `last` and every ORDER BY ... seq rely on.
    std::vector<std::uint32_t> start(keys_.size() + 1, 0);
    for (const BatchRow& r : pending_) ++start[r.key + 1];
    for (std::size_t k = 0; k < keys_.size(); ++k) start[k + 1] += start[k];
    std::vector<std::uint32_t> order(pending_.size());
    for (std::uint32_t i = 0; i < pending_.size(); ++i) order[start[pending_[i].key]++] = i;
    const Batch batch{&key_ids_, &pending_, &order};
    insert_metrics_.reset();
    insert_metrics_.bind_int64(1, run_id_);
    check(db_.handle(),
          sqlite3_bind_pointer(insert_metrics_.handle(), 2, const_cast<Batch*>(&batch), kBatchPointerType, nullptr),
          "while binding a batch of metrics");
    insert_metrics_.run();  // resets and clears the bindings: nothing points at `batch` after this
    for (const BatchRow& r : pending_) {
      summaries[r.key].add(r.value);
      seen[r.key] = true;
    }
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      if (!seen[k]) continue;
      const BatchSummary& s = summaries[k];
      upsert_summary_.reset();
      upsert_summary_.bind_int64(1, run_id_)
          .bind_text(2, keys_[k])
          .bind_double(3, s.last)
          .bind_double(4, s.min)
          .bind_double(5, s.max)
          .bind_double(6, s.sum)
          .bind_int64(7, s.count)
          .bind_int64(8, s.nan_count);
      upsert_summary_.run();
    }
    if (transaction) transaction->commit();
  } catch (StorageError& e) {
    for (std::size_t k : resolved) key_ids_[k] = -1;
    e.add_context(str_cat("while writing ", pending_.size(), " metric records of run ", run_id_, " to ", db_.path()));
    throw;
  }
  pending_.clear();
}

}  // namespace laconic::storage
