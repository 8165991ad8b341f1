#pragma once
// `laconic_batch(?)`: a table-valued function over rows held in memory, so the writer inserts a
// whole batch of metrics with one INSERT ... SELECT instead of one bind/step/reset per row.
#include <cstdint>
#include <vector>

struct sqlite3;

namespace laconic::storage {

/// One buffered metric row; `key` indexes Batch::key_ids.
struct BatchRow {
  std::uint32_t key;
  int worker;
  std::int64_t step;
  std::int64_t epoch;
  double wall_time;
  double value;  ///< NaN reads as NULL
};

/// What laconic_batch(?) scans: rows[order[0]], rows[order[1]], ... Bound with
/// sqlite3_bind_pointer(statement, i, &batch, kBatchPointerType, nullptr).
struct Batch {
  const std::vector<std::int64_t>* key_ids;  ///< metric_keys.id of each key a BatchRow names
  const std::vector<BatchRow>* rows;
  const std::vector<std::uint32_t>* order;
};

/// The pointer type name of a bound Batch.
inline constexpr const char* kBatchPointerType = "laconic_batch";

/// Makes laconic_batch(...) (columns key_id, step, epoch, worker, wall_time, value) known to `db`
/// unless it already is; StorageError if SQLite refuses.
void register_batch_table(sqlite3* db);

}  // namespace laconic::storage
