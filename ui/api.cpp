#include "ui/api.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/resolved_run.hpp"
#include "reports/aggregate.hpp"
#include "reports/answer.hpp"
#include "reports/churn.hpp"
#include "reports/report_model.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"
#include "storage/run_status.hpp"
#include "storage/run_where.hpp"
#include "storage/statement.hpp"
#include "ui/series.hpp"

namespace laconic::ui {
namespace {

using nlohmann::json;

json object_of(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json::object() : parsed;
}

// Assigned one by one: a braced list would copy every value once more (10,000 runs a request).
json run_row(const storage::RunRow& r) {
  json row = json::object();
  row["id"] = r.id;
  row["experiment"] = r.experiment;
  row["name"] = r.name;
  row["status"] = storage::to_string(r.status);
  row["label"] = r.status_label();
  row["stale"] = r.stale;
  row["error"] = r.error;
  row["seed"] = r.seed;
  row["repetition"] = r.repetition;
  row["swept"] = object_of(r.swept);
  row["configuration"] = storage::configuration_key(r);
  row["configuration_label"] = storage::configuration_label(r);
  row["test_accuracy"] = number_or_null(r.final_test_accuracy);
  row["test_loss"] = number_or_null(r.final_test_loss);
  row["test_perplexity"] = number_or_null(r.final_test_perplexity);
  row["bytes_sent"] = r.bytes_sent;
  row["bytes_dense"] = r.bytes_dense;
  row["compression"] = number_or_null(r.compression_ratio());
  row["wall"] = r.wall_time;
  row["created"] = number_or_null(r.created);
  row["started"] = number_or_null(r.started);
  row["ended"] = number_or_null(r.ended);
  row["heartbeat"] = number_or_null(r.heartbeat);
  row["host"] = r.host;
  row["note"] = r.note;
  row["tags"] = r.tags;
  return row;
}

json summary_row(const storage::Summary& s) {
  return {{"last", number_or_null(s.last)},
          {"min", number_or_null(s.min)},
          {"max", number_or_null(s.max)},
          {"mean", number_or_null(s.count > 0 ? s.sum / static_cast<double>(s.count) : std::nan(""))},
          {"sum", s.sum},
          {"count", s.count},
          {"nan_count", s.nan_count}};
}

std::int64_t key_id(storage::Database& db, const std::string& key) {
  storage::Statement q(db.handle(), "SELECT id FROM metric_keys WHERE name = ?1");
  q.bind_text(1, key);
  return q.step() ? q.column_int64(0) : -1;
}

}  // namespace

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

json status_choices() {
  json out = json::array();
  for (const storage::RunStatus status : storage::kRunStatuses) {
    out.push_back(storage::to_string(status));
    if (status == storage::RunStatus::Running) out.push_back("stale");  // RUNNING, but nobody runs it
  }
  return out;
}

json runs_json(storage::Database& db, std::optional<double> since) {
  const double now = storage::unix_now();
  json runs = json::array();
  for (const storage::RunRow& r : storage::list_runs(db)) {
    const auto after = [&](double t) { return !std::isnan(t) && t >= *since; };
    if (since && !after(r.created) && !after(r.started) && !after(r.heartbeat) && !after(r.ended)) continue;
    runs.push_back(run_row(r));
  }
  // Moved, not copied: an initializer list would copy every run's object (100,000 of them).
  json out = json::object();
  out["runs"] = std::move(runs);
  out["now"] = now;
  out["statuses"] = status_choices();
  return out;
}

json newest_runs_json(storage::Database& db, std::int64_t count) {
  const double now = storage::unix_now();
  storage::RunFilter newest;
  newest.newest = count;
  json runs = json::array();
  for (const storage::RunRow& r : storage::list_runs(db, newest)) runs.push_back(run_row(r));
  storage::Statement total(db.handle(), "SELECT count(*) FROM runs");
  total.step();
  json out = json::object();
  out["runs"] = std::move(runs);
  out["total"] = total.column_int64(0);
  out["now"] = now;
  out["statuses"] = status_choices();
  return out;
}

std::string runs_json_text(storage::Database& db) {
  // Each run's object written out as it is built: no tree of 100,000 objects to build and free.
  std::string out = "{\"runs\":[";
  bool first = true;
  for (const storage::RunRow& r : storage::list_runs(db)) {
    if (!first) out += ',';
    first = false;
    out += run_row(r).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  out += "],\"now\":";
  out += json(storage::unix_now()).dump();
  out += ",\"statuses\":";
  out += status_choices().dump();
  out += '}';
  return out;
}

json runs_matching_json(storage::Database& db, const std::string& where) {
  const std::vector<std::string> conditions = storage::split_where_list(where);
  json ids = json::array();
  for (const storage::RunRow& r : storage::runs_where(db, {}, conditions)) ids.push_back(r.id);
  return {{"ids", ids}, {"conditions", conditions}};
}

json run_json(storage::Database& db, std::int64_t run_id) {
  const storage::RunRow r = storage::require_run(db, run_id);
  json out = run_row(r);
  out["config"] = object_of(r.config);
  out["facts"] = storage::facts_of(db, run_id);
  out["device"] = storage::run_facts_of(db, run_id).trained_on();  // as the report's "trained on" says
  // Churn: the steps where the workers present changed, as the report's section reads them.
  json membership = json::array();
  for (const reports::MemberChange& c : reports::member_changes_of(db, run_id))
    membership.push_back({{"step", c.step}, {"members", c.members}, {"joined", c.joined}, {"left", c.left}});
  out["membership"] = membership;
  json summary = json::object();
  for (const auto& [key, s] : storage::summary_of(db, run_id)) summary[key] = summary_row(s);
  out["summary"] = summary;
  // Each recorded key's unit, as docs/schema.md writes it (engine/core/metric_keys.hpp): the run
  // page's panels name it; a key laconic does not know (a file's own metric) has none.
  json units = json::object();
  for (const keys::KeyInfo& k : keys::all_keys())
    if (summary.contains(k.name)) units[k.name] = k.unit;
  out["units"] = units;
  json epochs = json::array();
  for (const storage::EpochRow& e : storage::epochs_of(db, run_id))
    epochs.push_back({{"epoch", e.epoch + 1},  // as users count them: 1 = the first
                      {"test_accuracy", number_or_null(e.test_accuracy)},
                      {"test_loss", number_or_null(e.test_loss)},
                      {"test_perplexity", number_or_null(e.test_perplexity)},
                      {"epoch_train_loss", number_or_null(e.epoch_train_loss)},
                      {"epoch_time", number_or_null(e.epoch_time)},
                      {"bytes_sent", e.bytes_sent},
                      {"bytes_dense", e.bytes_dense}});
  out["epochs"] = epochs;
  // Steps of the first epoch (worker 0's train_loss rows): the x axis in epochs.
  storage::Statement q(
      db.handle(), "SELECT count(*) FROM metric_values WHERE run_id = ?1 AND key_id = ?2 AND worker = 0 AND epoch = 0");
  q.bind_int64(1, run_id);
  q.bind_int64(2, key_id(db, keys::kTrainLoss));
  out["steps_per_epoch"] = q.step() ? q.column_int64(0) : 0;
  return out;
}

json step_time_json(storage::Database& db, std::int64_t run_id) {
  const storage::RunRow run = storage::require_run(db, run_id);
  const storage::RunFacts facts = storage::run_facts_of(db, run_id);
  // Ranks below the run's workers are workers, the rest its servers: the resolved run says how
  // many workers (runs recorded before that fact: their configuration).
  std::int64_t run_workers = facts.resolved ? facts.resolved->workers : 0;
  if (run_workers == 0) {
    const json config = json::parse(run.config, nullptr, false);
    if (config.is_object() && config.contains("workers") && config["workers"].is_number_integer())
      run_workers = config["workers"].get<std::int64_t>();
  }
  // The parts of a step as the report's step-time section adds them up (docs/reports.md).
  static const std::vector<std::pair<std::string, std::vector<const char*>>> kParts = {
      {"compute", {keys::kTimeForward, keys::kTimeBackward, keys::kTimeOptimizer}},
      {"compress", {keys::kTimeCompress, keys::kTimeDecompress}},
      {"wait", {keys::kTimeWait}},
      {"communicate_measured", {keys::kTimeCommunicate}},
      {"communicate_projected", {keys::kProjectedTimeCommunicate}},
      {"hidden_behind_backward", {keys::kTimeOverlapped}},
      {"step", {keys::kTimeStep}}};
  std::map<int, std::map<std::string, double>> means;  // worker -> key -> mean over its steps
  for (const auto& [part, part_keys] : kParts)
    for (const char* key : part_keys) {
      const std::int64_t id = key_id(db, key);
      if (id < 0) continue;
      storage::Statement q(db.handle(),
                           "SELECT worker, avg(value) FROM metric_values WHERE run_id = ?1 AND key_id = ?2 "
                           "GROUP BY worker ORDER BY worker");
      q.bind_int64(1, run_id);
      q.bind_int64(2, id);
      while (q.step()) means[static_cast<int>(q.column_int64(0))][key] = q.column_double(1);
    }
  json workers = json::array();
  for (const auto& [worker, keys] : means) {
    json parts = {{"worker", worker}, {"role", run_workers > 0 && worker >= run_workers ? "server" : "worker"}};
    for (const auto& [part, part_keys] : kParts) {
      double sum = 0;
      bool any = false;
      for (const char* key : part_keys)
        if (const auto it = keys.find(key); it != keys.end() && std::isfinite(it->second)) {
          sum += it->second;
          any = true;
        }
      parts[part] = any ? json(sum) : json(nullptr);
    }
    workers.push_back(parts);
  }
  return {{"workers", workers}, {"thread_ranks", facts.thread_ranks()}};
}

namespace {

// step -> the sum of the worker's `key` up to and including that step (bytes sent, seconds).
std::map<std::int64_t, double> sum_so_far(storage::Database& db, std::int64_t run_id, const char* key, int worker) {
  std::map<std::int64_t, double> out;
  storage::Statement q(db.handle(),
                       "SELECT step, sum(value) OVER (ORDER BY step) FROM metric_values "
                       "WHERE run_id = ?1 AND key_id = ?2 AND worker = ?3 ORDER BY step");
  q.bind_int64(1, run_id);
  q.bind_int64(2, key_id(db, key));
  q.bind_int64(3, worker);
  while (q.step()) out[q.column_int64(0)] = q.column_double(1);
  return out;
}

// Sets each point's `field` to the sum up to its step (the last record at or before it; 0 before
// the first).
void place_sums(std::vector<SeriesPoint>& points, const std::map<std::int64_t, double>& sums,
                double SeriesPoint::*field) {
  for (SeriesPoint& p : points) {
    const auto at = sums.upper_bound(p.step);
    p.*field = at == sums.begin() ? 0.0 : std::prev(at)->second;
  }
}

}  // namespace

SeriesRead read_series(storage::Database& db, std::int64_t run_id, const SeriesQuery& query) {
  const std::int64_t id = key_id(db, query.key);
  std::vector<SeriesPoint> points;
  if (id >= 0) {
    storage::Statement q(db.handle(),
                         "SELECT step, value, wall_time FROM metric_values WHERE run_id = ?1 AND key_id = ?2 AND "
                         "worker = ?3 AND step > ?4 AND step >= ?5 AND step <= ?6 ORDER BY step");
    q.bind_int64(1, run_id);
    q.bind_int64(2, id);
    q.bind_int64(3, query.worker);
    q.bind_int64(4, query.after_step.value_or(std::numeric_limits<std::int64_t>::min()));
    q.bind_int64(5, query.from.value_or(std::numeric_limits<std::int64_t>::min()));
    q.bind_int64(6, query.to.value_or(std::numeric_limits<std::int64_t>::max()));
    while (q.step()) points.push_back({q.column_int64(0), q.column_double(1), q.column_double(2)});
  }
  if (query.bytes) place_sums(points, sum_so_far(db, run_id, keys::kBytesSent, query.worker), &SeriesPoint::bytes);
  if (query.projected)
    place_sums(points, sum_so_far(db, run_id, keys::kProjectedTimeStep, query.worker), &SeriesPoint::projected);
  const std::size_t total = points.size();
  const std::int64_t last_step = points.empty() ? -1 : points.back().step;
  return {downsample(points, query.buckets), total, last_step};
}

json series_json(storage::Database& db, std::int64_t run_id, const SeriesQuery& query) {
  const auto [points, total, last_step] = read_series(db, run_id, query);
  json steps = json::array(), values = json::array(), walls = json::array(), sent = json::array(),
       projected = json::array();
  for (const SeriesPoint& p : points) {
    steps.push_back(p.step);
    values.push_back(number_or_null(p.value));
    walls.push_back(number_or_null(p.wall));
    if (query.bytes) sent.push_back(p.bytes);
    if (query.projected) projected.push_back(p.projected);
  }
  json out = {{"key", query.key},
              {"worker", query.worker},
              {"total", total},
              {"last_step", last_step},
              {"downsampled", points.size() < total},
              {"step", steps},
              {"value", values},
              {"wall", walls}};
  if (query.bytes) out["bytes"] = sent;
  if (query.projected) out["projected"] = projected;
  return out;
}

json experiments_json(storage::Database& db) {
  storage::Statement q(db.handle(),
                       "SELECT e.name, r.status, count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                       "GROUP BY e.name, r.status ORDER BY min(r.id)");
  std::map<std::string, json> by_name;
  std::vector<std::string> order;
  while (q.step()) {
    const std::string name = q.column_text(0);
    if (!by_name.count(name)) {
      order.push_back(name);
      by_name[name] = {{"name", name}, {"runs", 0}, {"statuses", json::object()}};
    }
    json& e = by_name[name];
    e["statuses"][q.column_text(1)] = q.column_int64(2);
    e["runs"] = e["runs"].get<std::int64_t>() + q.column_int64(2);
  }
  json out = json::array();
  for (const std::string& name : order) out.push_back(by_name[name]);
  return out;
}

}  // namespace laconic::ui
