#include "storage/queries.hpp"

#include "storage/run_status.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

// The run_summary lookups are correlated subqueries on its primary key, so a listing costs a
// few index probes per run whatever the size of the metrics table.
const char* const kRunColumns = R"sql(
SELECT r.id, e.name, r.name, r.status, coalesce(r.error, ''), r.seed, r.repetition, r.swept,
       r.started, r.ended, r.heartbeat,
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_accuracy'),
       coalesce((SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_sent'), 0),
       coalesce((SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_dense'), 0)
FROM runs r JOIN experiments e ON e.id = r.experiment_id
)sql";

RunRow read_run(const Statement& q, double now) {
  RunRow row;
  row.id = q.column_int64(0);
  row.experiment = q.column_text(1);
  row.name = q.column_text(2);
  row.status = q.column_text(3);
  row.error = q.column_text(4);
  row.seed = q.column_int64(5);
  row.repetition = q.column_int64(6);
  row.swept = q.column_text(7);
  row.started = q.column_double(8);
  row.ended = q.column_double(9);
  row.heartbeat = q.column_double(10);
  if (!q.column_is_null(8)) row.wall_time = (q.column_is_null(9) ? now : row.ended) - row.started;
  row.final_test_accuracy = q.column_double(11);
  row.bytes_sent = q.column_double(12);
  row.bytes_dense = q.column_double(13);
  return row;
}

}  // namespace

std::vector<ExperimentRow> list_experiments(Database& db) {
  Statement q(db.handle(), "SELECT id, name, file_path, file_hash, created FROM experiments ORDER BY id");
  std::vector<ExperimentRow> rows;
  while (q.step())
    rows.push_back({q.column_int64(0), q.column_text(1), q.column_text(2), q.column_text(3), q.column_double(4)});
  return rows;
}

std::vector<RunRow> list_runs(Database& db, const RunFilter& filter) {
  if (filter.status) run_status_from_string(*filter.status);  // a typo is an error, not an empty list
  Statement q(db.handle(), std::string(kRunColumns) +
                               "WHERE (?1 IS NULL OR e.name = ?1) AND (?2 IS NULL OR r.status = ?2) ORDER BY r.id");
  if (filter.experiment) q.bind_text(1, *filter.experiment);
  if (filter.status) q.bind_text(2, *filter.status);
  const double now = unix_now();
  std::vector<RunRow> rows;
  while (q.step()) rows.push_back(read_run(q, now));
  return rows;
}

std::optional<RunRow> find_run(Database& db, std::int64_t run_id) {
  Statement q(db.handle(), std::string(kRunColumns) + "WHERE r.id = ?1");
  q.bind_int64(1, run_id);
  if (!q.step()) return std::nullopt;
  return read_run(q, unix_now());
}

std::vector<MetricRecord> metrics_of(Database& db, std::int64_t run_id, const std::string& key) {
  Statement q(db.handle(),
              "SELECT step, epoch, worker, wall_time, value FROM metrics WHERE run_id = ?1 AND key = ?2 "
              "ORDER BY epoch, step, worker, rowid");
  q.bind_int64(1, run_id).bind_text(2, key);
  std::vector<MetricRecord> records;
  while (q.step()) {
    MetricRecord r;
    r.key = key;
    r.step = q.column_int64(0);
    r.epoch = q.column_int64(1);
    r.worker = static_cast<int>(q.column_int64(2));
    r.wall_time = q.column_double(3);
    r.value = q.column_double(4);
    records.push_back(std::move(r));
  }
  return records;
}

std::map<std::string, Summary> summary_of(Database& db, std::int64_t run_id) {
  Statement q(db.handle(),
              "SELECT key, last, min, max, sum, count, nan_count FROM run_summary WHERE run_id = ?1 ORDER BY key");
  q.bind_int64(1, run_id);
  std::map<std::string, Summary> out;
  while (q.step())
    out[q.column_text(0)] = {q.column_double(1), q.column_double(2), q.column_double(3),
                             q.column_double(4), q.column_int64(5),  q.column_int64(6)};
  return out;
}

}  // namespace laconic::storage
