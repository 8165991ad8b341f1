#include "storage/export.hpp"

#include <cmath>

#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// The filter's lists travel as bound JSON arrays read with json_each, so no user text is ever
// part of the SQL.
const char* const kFilter = R"sql(
  (?1 IS NULL OR e.name = ?1)
  AND (?2 IS NULL OR r.id IN (SELECT value FROM json_each(?2)))
  AND (?3 IS NULL OR KEY_COLUMN IN (SELECT value FROM json_each(?3)))
)sql";

std::string filter_sql(const std::string& key_column) {
  std::string sql = kFilter;
  sql.replace(sql.find("KEY_COLUMN"), 10, key_column);
  return sql;
}

void bind_filter(Statement& q, const ExportFilter& filter) {
  if (filter.experiment) q.bind_text(1, *filter.experiment);
  if (!filter.runs.empty()) q.bind_text(2, nlohmann::json(filter.runs).dump());
  if (!filter.keys.empty()) q.bind_text(3, nlohmann::json(filter.keys).dump());
}

std::int64_t stream(Statement& q, const std::vector<std::string>& columns, const std::vector<int>& nan_if_null,
                    const RowSink& sink) {
  sink.header(columns);
  std::vector<Cell> row;
  std::int64_t rows = 0;
  while (q.step()) {
    read_row(q.handle(), static_cast<int>(columns.size()), row);
    for (int c : nan_if_null) {
      Cell& cell = row[static_cast<std::size_t>(c)];
      if (cell.type == Cell::Type::Null) {
        cell.type = Cell::Type::Real;
        cell.real = std::nan("");
      }
    }
    sink.row(row);
    ++rows;
  }
  return rows;
}

// Streams `select` (ending in WHERE or AND) restricted by the filter, whose keys are in
// `key_column`, in `order_by`; the columns at `nan_if_null` read NULL as NaN.
std::int64_t export_filtered(Database& db, const ExportFilter& filter, const std::string& select,
                             const std::string& key_column, const std::string& order_by,
                             const std::vector<std::string>& columns, const std::vector<int>& nan_if_null,
                             const RowSink& sink) {
  Statement q(db.handle(), select + filter_sql(key_column) + " ORDER BY " + order_by);
  bind_filter(q, filter);
  return stream(q, columns, nan_if_null, sink);
}

}  // namespace

std::int64_t export_metrics(Database& db, const ExportFilter& filter, const RowSink& sink) {
  // CROSS JOIN fixes the loop order (runs by id, each run's keys by name, each key's index range
  // by step), which is the ORDER BY: rows stream out with no sort, however many there are.
  return export_filtered(db, filter,
                         "SELECT v.run_id, e.name, r.name, k.name, v.step, v.epoch, v.worker, v.wall_time, v.value "
                         "FROM runs r CROSS JOIN experiments e CROSS JOIN metric_keys k CROSS JOIN metric_values v "
                         "WHERE e.id = r.experiment_id AND v.run_id = r.id AND v.key_id = k.id AND ",
                         "k.name", "r.id, k.name, v.step",
                         {"run_id", "experiment", "run", "key", "step", "epoch", "worker", "wall_time", "value"}, {8},
                         sink);
}

std::int64_t export_summary(Database& db, const ExportFilter& filter, const RowSink& sink) {
  return export_filtered(
      db, filter,
      "SELECT s.run_id, e.name, r.name, s.key, s.last, s.min, s.max, s.sum / nullif(s.count, 0), "
      "s.sum, s.count, s.nan_count FROM runs r JOIN experiments e ON e.id = r.experiment_id "
      "JOIN run_summary s ON s.run_id = r.id WHERE ",
      "s.key", "s.run_id, s.key",
      {"run_id", "experiment", "run", "key", "last", "min", "max", "mean", "sum", "count", "nan_count"},
      {4, 5, 6, 7, 8}, sink);
}

}  // namespace laconic::storage
