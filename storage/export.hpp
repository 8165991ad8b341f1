#pragma once
// Streams the metrics and run_summary tables row by row (for `laconic export`), so memory does
// not grow with the number of rows.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/user_query.hpp"

namespace laconic::storage {

/// Restricts an export; empty fields match everything.
struct ExportFilter {
  std::optional<std::string> experiment;  ///< experiment name
  std::vector<std::int64_t> runs;         ///< run ids
  std::vector<std::string> keys;          ///< metric keys
};

/// Called once with the column names, then once per row (the cells are reused between calls).
struct RowSink {
  std::function<void(const std::vector<std::string>&)> header;
  std::function<void(const std::vector<Cell>&)> row;
};

/// Every metrics row matching `filter`: run_id, experiment, run, key, step, epoch, worker,
/// wall_time, value; ordered by run id, key and step (the order of the metrics index, so
/// nothing is sorted in memory). A NULL value (a stored NaN) comes back
/// as a Real NaN cell. Returns the number of rows.
std::int64_t export_metrics(Database& db, const ExportFilter& filter, const RowSink& sink);

/// Every run_summary row matching `filter`: run_id, experiment, run, key, last, min, max, mean,
/// sum, count, nan_count; ordered by run id and key. NULL last/min/max/mean/sum come back as
/// NaN (for min/max: no non-NaN value). Returns the number of rows.
std::int64_t export_summary(Database& db, const ExportFilter& filter, const RowSink& sink);

}  // namespace laconic::storage
