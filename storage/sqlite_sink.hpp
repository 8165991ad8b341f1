#pragma once
// The MetricsSink that stores one run's metrics in SQLite, keeping run_summary up to date in the
// same transaction as each batch so that listings never scan the metrics table.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/metrics.hpp"
#include "storage/batch_table.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {

/// True for SQLite failures that may pass if one waits: locked or busy, a full disk, an I/O
/// error, a file or directory that cannot be written or opened right now, no memory.
bool is_transient(const StorageError& error);
/// True when another connection holds the lock the write needed (SQLITE_BUSY, SQLITE_LOCKED).
bool is_lock(const StorageError& error);

/// What a sink does when a commit fails.
enum class OnWriteFailure {
  Throw,         ///< roll back, keep the rows, throw the StorageError
  KeepAndRetry,  ///< for a transient failure: roll back, keep the rows, retry later, never throw
};

/// Buffers records and writes them in one transaction per batch. Thread-safe. The Database must
/// outlive it. Usually made by Recorder::metrics_sink() (OnWriteFailure::Throw) or
/// Recorder::retrying_sink() (KeepAndRetry: the controller's, which must never drop a row).
class SqliteSink : public MetricsSink {
 public:
  /// Rows buffered before record() commits a batch on its own.
  static constexpr std::size_t kBatchRows = 8192;

  SqliteSink(Database& db, std::int64_t run_id, std::size_t batch_rows = kBatchRows,
             OnWriteFailure on_failure = OnWriteFailure::Throw);
  /// Commits what is buffered; a failure is printed to stderr, never thrown.
  ~SqliteSink() override;

  /// Buffers one record; commits when kBatchRows are buffered (with KeepAndRetry, while a
  /// failure lasts, at most once per back-off interval: 0.1 s doubling to 5 s). NaN values are
  /// stored as NULL.
  void record(const MetricRecord& record) override;
  /// Commits everything buffered, so readers see it. On failure the batch is rolled back and
  /// kept for the next attempt; the StorageError is thrown (Throw, or a failure that will not
  /// pass) or remembered (KeepAndRetry: see outage_seconds()).
  void flush() override;
  /// Commits the buffered rows inside a transaction the caller holds (BEGIN ... COMMIT around
  /// it, e.g. a journal's replay): no transaction of its own, throws on any failure.
  void write_in_open_transaction();

  std::int64_t run_id() const { return run_id_; }
  /// Records buffered and not yet committed.
  std::size_t pending() const;
  /// Seconds since the first failed commit of the current failure (KeepAndRetry); 0 when the
  /// last commit succeeded.
  double outage_seconds() const;
  /// The message of the last failed commit; "" when the last commit succeeded.
  std::string last_error() const;
  /// SQLite's result code of the last failed commit (SQLITE_FULL, SQLITE_BUSY, ...); 0 when the
  /// last commit succeeded.
  int last_error_code() const;
  /// Hands over the rows not yet committed (for a recovery journal) and forgets them.
  std::vector<MetricRecord> take_pending();
  /// While held, nothing is committed: record() only buffers (past batch_rows too), flush() and
  /// the destructor write nothing. For a run trained before its claim is in the database
  /// (another process holds its lock): its rows wait for the claim. Thread-safe.
  void hold(bool held);
  bool held() const;

 private:
  void commit_locked(bool own_transaction = true);
  /// Commits, or with KeepAndRetry remembers a transient failure and schedules the next try.
  void try_commit_locked();
  /// Looks up (adding if new) the metric_keys id of every key that has none yet, inside the
  /// batch's transaction, appending to `resolved` the index of each key it resolved, so that a
  /// rollback can forget them.
  void resolve_key_ids(std::vector<std::size_t>& resolved);
  /// Index of `key` in keys_, added if new. Records cycle through the same few keys, so the key
  /// after the previous one is tried first.
  std::uint32_t intern(const std::string& key);

  using Clock = std::chrono::steady_clock;
  Database& db_;
  std::int64_t run_id_;
  std::size_t batch_rows_;
  OnWriteFailure on_failure_;
  mutable std::mutex mutex_;
  std::optional<Clock::time_point> failing_since_;  ///< first failure of the current outage
  Clock::time_point next_attempt_{};
  double backoff_seconds_ = 0.1;
  std::string last_error_;
  int last_error_code_ = 0;
  std::vector<BatchRow> pending_;      ///< keys interned: no string copy per row
  std::vector<std::string> keys_;      ///< every key this sink has seen, in first-seen order
  std::vector<std::int64_t> key_ids_;  ///< metric_keys.id of keys_[i]; -1 until a commit resolves it
  std::uint32_t last_key_ = 0;
  bool held_ = false;
  Statement insert_metrics_;  ///< INSERT ... SELECT FROM laconic_batch(?2): a whole batch in one step
  Statement add_key_;
  Statement find_key_;
  Statement upsert_summary_;
};

}  // namespace laconic::storage
