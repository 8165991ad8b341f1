#pragma once
// The MetricsSink that stores one run's metrics in SQLite, keeping run_summary up to date in the
// same transaction as each batch so that listings never scan the metrics table.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/metrics.hpp"
#include "storage/batch_table.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {

/// Buffers records and writes them in one transaction per batch. Thread-safe. The Database must
/// outlive it. Usually made by Recorder::metrics_sink().
class SqliteSink : public MetricsSink {
 public:
  /// Rows buffered before record() commits a batch on its own.
  static constexpr std::size_t kBatchRows = 8192;

  SqliteSink(Database& db, std::int64_t run_id, std::size_t batch_rows = kBatchRows);
  /// Commits what is buffered; a failure is printed to stderr, never thrown.
  ~SqliteSink() override;

  /// Buffers one record; commits when kBatchRows are buffered. NaN values are stored as NULL.
  void record(const MetricRecord& record) override;
  /// Commits everything buffered, so readers see it. On failure the batch is rolled back, kept
  /// for the next attempt, and the StorageError is thrown.
  void flush() override;

  std::int64_t run_id() const { return run_id_; }
  /// Records buffered and not yet committed.
  std::size_t pending() const;

 private:
  void commit_locked();
  /// Looks up (adding if new) the metric_keys id of every key that has none yet, inside the
  /// batch's transaction, appending to `resolved` the index of each key it resolved, so that a
  /// rollback can forget them.
  void resolve_key_ids(std::vector<std::size_t>& resolved);
  /// Index of `key` in keys_, added if new. Records cycle through the same few keys, so the key
  /// after the previous one is tried first.
  std::uint32_t intern(const std::string& key);

  Database& db_;
  std::int64_t run_id_;
  std::size_t batch_rows_;
  mutable std::mutex mutex_;
  std::vector<BatchRow> pending_;  ///< keys interned: no string copy per row
  std::vector<std::string> keys_;  ///< every key this sink has seen, in first-seen order
  std::vector<std::int64_t> key_ids_;  ///< metric_keys.id of keys_[i]; -1 until a commit resolves it
  std::uint32_t last_key_ = 0;
  Statement insert_metrics_;  ///< INSERT ... SELECT FROM laconic_batch(?2): a whole batch in one step
  Statement add_key_;
  Statement find_key_;
  Statement upsert_summary_;
};

}  // namespace laconic::storage
