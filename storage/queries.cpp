#include "storage/queries.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/host_name.hpp"
#include "engine/core/run_config.hpp"
#include "engine/core/metric_keys.hpp"
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
       coalesce((SELECT s.sum FROM run_summary s WHERE s.run_id = r.id AND s.key = 'bytes_dense'), 0),
       coalesce(r.host, ''), coalesce(r.controller_pid, 0), r.attempts, r.checkpoint_step,
       r.config, r.created, coalesce(r.laconic_version, ''),
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_loss'),
       (SELECT s.last FROM run_summary s WHERE s.run_id = r.id AND s.key = 'test_perplexity'),
       r.workers_silent, coalesce(r.note, ''),
       (SELECT group_concat(t.tag, ',') FROM (SELECT tag FROM run_tags WHERE run_id = r.id ORDER BY tag) t)
FROM runs r JOIN experiments e ON e.id = r.experiment_id
)sql";

// True only when the process certainly does not exist here (ESRCH); EPERM means it does.
bool process_gone(std::int64_t pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH; }

bool is_stale(const RunRow& row, double now) {
  if (row.status != RunStatus::Running) return false;
  if (!(now - row.heartbeat <= kStaleAfterSeconds)) return true;  // NaN heartbeat too
  static const std::string host = host_name();
  return !host.empty() && row.host == host && process_gone(row.controller_pid);
}

}  // namespace

bool controller_alive(const RunRow& row) {
  static const std::string host = host_name();
  if (!host.empty() && row.host == host) return row.controller_pid > 0 && !process_gone(row.controller_pid);
  const double last = std::isnan(row.heartbeat) ? row.created : row.heartbeat;
  return unix_now() - last <= kStaleAfterSeconds;
}

namespace {

RunRow read_run(const Statement& q, double now) {
  RunRow row;
  std::string status, tags;
  q.columns(0, row.id, row.experiment, row.name, status, row.error, row.seed, row.repetition, row.swept, row.started,
            row.ended, row.heartbeat, row.final_test_accuracy, row.bytes_sent, row.bytes_dense, row.host,
            row.controller_pid, row.attempts, row.checkpoint_step, row.config, row.created, row.laconic_version,
            row.final_test_loss, row.final_test_perplexity, row.workers_silent, row.note, tags);
  row.status = run_status_from_string(status);
  if (!std::isnan(row.started)) row.wall_time = (std::isnan(row.ended) ? now : row.ended) - row.started;
  for (std::size_t begin = 0; begin < tags.size();) {
    const std::size_t end = std::min(tags.find(',', begin), tags.size());
    row.tags.push_back(tags.substr(begin, end - begin));
    begin = end + 1;
  }
  row.stale = is_stale(row, now);
  return row;
}

}  // namespace

double RunRow::compression_ratio() const {
  return bytes_sent > 0 ? bytes_dense / bytes_sent : std::numeric_limits<double>::quiet_NaN();
}

std::string RunRow::status_label() const {
  if (stale) return to_string(status) + " (stale)";
  if (status == RunStatus::Running && workers_silent > kSilentWorkersAfterSeconds)
    return str_cat(to_string(status), " (workers silent ", static_cast<long>(workers_silent), "s)");
  return to_string(status);
}

std::vector<ExperimentRow> list_experiments(Database& db) {
  Statement q(db.handle(), "SELECT id, name, file_path, file_hash, created FROM experiments ORDER BY id");
  std::vector<ExperimentRow> rows;
  while (q.step())
    rows.push_back({q.column_int64(0), q.column_text(1), q.column_text(2), q.column_text(3), q.column_double(4)});
  return rows;
}

std::string configuration_key(const storage::RunRow& run) {
  const auto swept = nlohmann::json::parse(run.swept, nullptr, false);
  if (swept.is_discarded()) return run.experiment + "\n" + run.swept;
  return laconic::configuration_key(run.experiment, swept);
}

std::string configuration_label(const storage::RunRow& run) {
  std::string label;
  std::size_t from = 0;
  while (from <= run.name.size()) {
    const auto comma = run.name.find(',', from);
    const std::string part = run.name.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    if (!part.starts_with(std::string(kSeedVariable) + "=")) label += (label.empty() ? "" : ",") + part;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return label.empty() ? "(no swept variable)" : label;
}

std::vector<RunRow> list_runs(Database& db, const RunFilter& filter) {
  // Any case; a typo is an error, not an empty list.
  const std::optional<std::string> status =
      filter.status ? std::optional<std::string>(to_string(run_status_from_string(*filter.status))) : std::nullopt;
  Statement q(db.handle(), std::string(kRunColumns) +
                               "WHERE (?1 IS NULL OR e.name = ?1) AND (?2 IS NULL OR r.status = ?2) ORDER BY r.id" +
                               (filter.newest ? " DESC LIMIT ?3" : ""));
  if (filter.experiment) q.bind_text(1, *filter.experiment);
  if (status) q.bind_text(2, *status);
  if (filter.newest) q.bind_int64(3, std::max<std::int64_t>(0, *filter.newest));
  const double now = unix_now();
  std::vector<RunRow> rows;
  while (q.step()) rows.push_back(read_run(q, now));
  if (filter.newest) std::reverse(rows.begin(), rows.end());  // by id, as always
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
              "ORDER BY epoch, step, worker, seq");
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

RunRow require_run(Database& db, std::int64_t run_id) {
  if (auto run = find_run(db, run_id)) return *run;
  const IdRange range = run_id_range(db);
  if (range.count == 0) throw ConfigError(str_cat("no run ", run_id, " in ", db.path(), ": it holds no runs yet"));
  throw ConfigError(str_cat("no run ", run_id, " in ", db.path(), "; it holds ", range.count, " runs with ids ",
                            range.min, " to ", range.max, " (laconic runs lists them)"));
}

IdRange run_id_range(Database& db) {
  Statement q(db.handle(), "SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM runs");
  q.step();
  return {q.column_int64(0), q.column_int64(1), q.column_int64(2)};
}

std::vector<std::string> metric_keys(Database& db, const std::optional<std::string>& experiment) {
  Statement q(db.handle(),
              "SELECT DISTINCT s.key FROM run_summary s JOIN runs r ON r.id = s.run_id "
              "JOIN experiments e ON e.id = r.experiment_id WHERE ?1 IS NULL OR e.name = ?1 ORDER BY s.key");
  if (experiment) q.bind_text(1, *experiment);
  std::vector<std::string> keys;
  while (q.step()) keys.push_back(q.column_text(0));
  return keys;
}

std::map<std::int64_t, Summary> summaries_of_key(Database& db, const std::string& key) {
  Statement q(db.handle(), "SELECT run_id, last, min, max, sum, count, nan_count FROM run_summary WHERE key = ?1");
  q.bind_text(1, key);
  std::map<std::int64_t, Summary> out;
  while (q.step())
    out[q.column_int64(0)] = {q.column_double(1), q.column_double(2), q.column_double(3),
                              q.column_double(4), q.column_int64(5),  q.column_int64(6)};
  return out;
}

std::vector<EpochRow> epochs_of(Database& db, std::int64_t run_id) {
  // One index range per key. Test metrics come from worker 0: with eval_every there are several
  // in an epoch, and the epoch's own is its last (SQLite takes `value` from the max(step) row).
  // Per-worker keys are averaged; a NaN (NULL) among the values makes the mean NaN, as it would
  // in arithmetic.
  Statement q(db.handle(), R"sql(
SELECT key, epoch, CASE WHEN count(value) < count(*) THEN NULL ELSE avg(value) END, max(value), total(value), 0
FROM metrics
WHERE run_id = ?1 AND epoch >= 0 AND key IN ('epoch_train_loss', 'epoch_time', 'bytes_sent', 'bytes_dense')
GROUP BY key, epoch
UNION ALL
SELECT key, epoch, value, value, value, max(step)
FROM metrics
WHERE run_id = ?1 AND epoch >= 0 AND worker = 0 AND key IN ('test_accuracy', 'test_loss', 'test_perplexity')
GROUP BY key, epoch
)sql");
  q.bind_int64(1, run_id);
  std::map<std::int64_t, EpochRow> rows;
  while (q.step()) {
    const std::string key = q.column_text(0);
    EpochRow& row = rows[q.column_int64(1)];
    row.epoch = q.column_int64(1);
    if (key == keys::kTestAccuracy)
      row.test_accuracy = q.column_double(2);
    else if (key == keys::kTestLoss)
      row.test_loss = q.column_double(2);
    else if (key == keys::kTestPerplexity)
      row.test_perplexity = q.column_double(2);
    else if (key == keys::kEpochTrainLoss)
      row.epoch_train_loss = q.column_double(2);
    else if (key == keys::kEpochTime)
      row.epoch_time = q.column_double(3);
    else if (key == keys::kBytesSent)
      row.bytes_sent = q.column_double(4);
    else if (key == keys::kBytesDense)
      row.bytes_dense = q.column_double(4);
  }
  std::vector<EpochRow> out;
  for (auto& [epoch, row] : rows) out.push_back(row);
  return out;
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

std::map<std::string, std::string> facts_of(Database& db, std::int64_t run_id) {
  Statement q(db.handle(), "SELECT key, value FROM run_facts WHERE run_id = ?1 ORDER BY key");
  q.bind_int64(1, run_id);
  std::map<std::string, std::string> out;
  while (q.step()) out[q.column_text(0)] = q.column_text(1);
  return out;
}

std::map<std::int64_t, std::string> fact_of_runs(Database& db, const std::string& key) {
  Statement q(db.handle(), "SELECT run_id, value FROM run_facts WHERE key = ?1");
  q.bind_text(1, key);
  std::map<std::int64_t, std::string> out;
  while (q.step()) out[q.column_int64(0)] = q.column_text(1);
  return out;
}

std::optional<std::int64_t> find_finished_run(Database& db, const std::string& experiment,
                                              const std::string& config_json) {
  Statement q(db.handle(), kFinishedRunQuery);
  q.bind_text(1, experiment).bind_text(2, config_json);
  if (!q.step()) return std::nullopt;
  return q.column_int64(0);
}

}  // namespace laconic::storage
