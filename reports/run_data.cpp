#include "reports/run_data.hpp"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/core/metric_keys.hpp"
#include "reports/stats.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"
#include "storage/statement.hpp"

namespace laconic::reports {
namespace {

struct Total {
  double sum = 0;
  std::int64_t count = 0;
  double mean() const { return count == 0 ? kNaN : sum / static_cast<double>(count); }
};

const char* const kStepKeys[] = {keys::kTimeForward,    keys::kTimeBackward,
                                 keys::kTimeOptimizer,  keys::kTimeCompress,
                                 keys::kTimeDecompress, keys::kTimeCommunicate,
                                 keys::kTimeWait,       keys::kBytesSent,
                                 keys::kBytesDense,     keys::kProjectedTimeCommunicate,
                                 keys::kTimeOverlapped, keys::kMessages,
                                 keys::kLinkBytes,      keys::kTimeOverlapBudget,
                                 keys::kBetweenMessages, keys::kBetweenLinkBytes,
                                 keys::kBetweenSharedBytes};

// The quartiles of time_step over the worker ranks' steps: one pass over the run's rows of it.
void collect_step_quartiles(storage::Database& db, RunData& data) {
  storage::Statement q(db.handle(),
                       "SELECT value FROM metrics WHERE run_id = ?1 AND key = 'time_step' AND "
                       "epoch >= 0 AND worker < ?2");
  q.bind_int64(1, data.run.id).bind_int64(2, data.run.workers);
  std::vector<double> steps;
  while (q.step()) steps.push_back(q.column_double(0));
  data.step_q1 = quantile_of(steps, 0.25);
  data.step_median = quantile_of(steps, 0.5);
  data.step_q3 = quantile_of(steps, 0.75);
}

// Totals of the per-step keys over worker ranks. Without servers run_summary has them already;
// with servers their rows must be left out, which costs one pass over the run's rows of each key
// (the (run_id, key, step) index bounds it to this run).
std::map<std::string, Total> step_totals(storage::Database& db, const RunData& data,
                                         const std::map<std::string, storage::Summary>& summary) {
  std::map<std::string, Total> totals;
  if (!data.has_servers) {
    for (const char* key : kStepKeys)
      if (const auto it = summary.find(key); it != summary.end()) totals[key] = {it->second.sum, it->second.count};
    return totals;
  }
  storage::Statement q(db.handle(),
                       "SELECT sum(value), count(value) FROM metrics WHERE run_id = ?1 AND key = ?2 AND worker < ?3");
  for (const char* key : kStepKeys) {
    q.reset();
    q.bind_int64(1, data.run.id).bind_text(2, key).bind_int64(3, data.run.workers);
    if (q.step() && q.column_int64(1) > 0) totals[key] = {q.column_double(0), q.column_int64(1)};
  }
  return totals;
}

double sum_of_means(const std::map<std::string, Total>& totals, std::initializer_list<const char*> keys) {
  double sum = 0;
  bool any = false;
  for (const char* key : keys)
    if (const auto it = totals.find(key); it != totals.end() && it->second.count > 0) {
      sum += it->second.mean();
      any = true;
    }
  return any ? sum : kNaN;
}

double total_sum(const std::map<std::string, Total>& totals, const char* key) {
  const auto it = totals.find(key);
  return it == totals.end() ? kNaN : it->second.sum;
}

// A key a step records only when it exchanged (time_wait: local SGD and DiLoCo wait once a
// round), averaged over every step the workers took, which all record time_forward.
double mean_per_step(const std::map<std::string, Total>& totals, const char* key) {
  const auto steps = totals.find(keys::kTimeForward);
  const auto it = totals.find(key);
  if (it == totals.end() || it->second.count == 0) return kNaN;
  if (steps == totals.end() || steps->second.count < it->second.count) return it->second.mean();
  return it->second.sum / static_cast<double>(steps->second.count);
}

// Sums and counts of per-step keys by epoch or step (`group`): bytes over the worker ranks,
// projected_time_step of worker 0, training rows only. key -> epoch or step -> total.
using GroupedTotals = std::map<std::string, std::map<std::int64_t, Total>>;
GroupedTotals totals_by(storage::Database& db, const RunData& data, const std::string& group,
                        const std::string& key_list) {
  const std::string sql = "SELECT key, " + group +
                          ", sum(value), count(value) FROM metrics WHERE run_id = ?1 AND key IN (" + key_list +
                          ") AND epoch >= 0 AND (CASE key WHEN 'projected_time_step' THEN worker = 0 " +
                          "ELSE worker < ?2 END) GROUP BY key, " + group;
  storage::Statement q(db.handle(), sql);
  q.bind_int64(1, data.run.id).bind_int64(2, data.run.workers);
  GroupedTotals totals;
  while (q.step()) totals[q.column_text(0)][q.column_int64(1)] = {q.column_double(2), q.column_int64(3)};
  return totals;
}

// Per-epoch rows of worker 0 (test metric, epoch_time) and per-epoch aggregates of the per-step
// keys over worker ranks. Parameter servers record epoch -1, which `epoch >= 0` leaves out too.
void collect_epochs(storage::Database& db, RunData& data, const std::string& metric) {
  std::map<std::int64_t, EpochPoint> epochs;
  auto at = [&epochs](std::int64_t epoch) -> EpochPoint& {
    EpochPoint& e = epochs[epoch];
    e.epoch = epoch;
    return e;
  };
  storage::Statement worker0(db.handle(),
                             "SELECT key, epoch, value FROM metrics WHERE run_id = ?1 AND key IN (?2, 'epoch_time') "
                             "AND worker = 0 ORDER BY step, seq");
  worker0.bind_int64(1, data.run.id).bind_text(2, metric);
  std::map<std::int64_t, double> epoch_time;
  while (worker0.step()) {
    EpochPoint& e = at(worker0.column_int64(1));
    if (worker0.column_text(0) == metric)
      e.test_metric = worker0.column_double(2);
    else
      epoch_time[e.epoch] = worker0.column_double(2);
  }
  std::map<std::int64_t, double> bytes, projected;
  const GroupedTotals per_epoch = totals_by(db, data, "epoch", "'bytes_sent', 'payload_bytes', 'projected_time_step'");
  for (const auto& [key, by_epoch] : per_epoch)
    for (const auto& [epoch, total] : by_epoch) {
      EpochPoint& e = at(epoch);
      if (key == keys::kBytesSent) bytes[epoch] = total.sum;
      if (key == keys::kProjectedTimeStep) projected[epoch] = total.sum;
      if (key == keys::kPayloadBytes && total.count > 0) e.payload_bytes = total.mean();
    }
  // Running sums; a gap (an epoch without the key) makes the rest unknown rather than wrong.
  double measured_sum = 0, projected_sum = 0, bytes_sum = 0;
  for (auto& [key, e] : epochs) {
    const std::int64_t epoch = key;  // a variable of its own: lambdas capture it (clang 14 cannot capture a binding)
    auto accumulate = [epoch](const std::map<std::int64_t, double>& values, double& sum) {
      const auto it = values.find(epoch);
      sum = it == values.end() ? kNaN : sum + it->second;
      return sum;
    };
    e.measured_time = epoch_time.empty() ? kNaN : accumulate(epoch_time, measured_sum);
    e.projected_time = projected.empty() ? kNaN : accumulate(projected, projected_sum);
    e.bytes_sent = bytes.empty() ? kNaN : accumulate(bytes, bytes_sum);
    data.epochs.push_back(e);
  }
}

// Every evaluation of worker 0 with the running sums of bytes and projected time up to its step.
// Runs that evaluate only at epoch ends take those sums from the epochs (no pass over steps).
void collect_evaluations(storage::Database& db, RunData& data, const std::string& metric) {
  storage::Statement evaluations(db.handle(),
                                 "SELECT step, epoch, wall_time, value FROM metrics WHERE run_id = ?1 AND key = ?2 "
                                 "AND worker = 0 AND epoch >= 0 ORDER BY step, seq");
  evaluations.bind_int64(1, data.run.id).bind_text(2, metric);
  while (evaluations.step())
    data.evaluations.push_back({evaluations.column_int64(0) + 1, evaluations.column_int64(1),
                                evaluations.column_double(3), evaluations.column_double(2), kNaN, kNaN});
  for (const EvalPoint& point : data.evaluations)
    if (point.epoch == 0) data.steps_per_epoch = point.step;  // the last of epoch 0 is its end
  if (data.evaluations.size() <= data.epochs.size()) {
    std::map<std::int64_t, const EpochPoint*> by_epoch;
    for (const EpochPoint& e : data.epochs) by_epoch[e.epoch] = &e;
    for (EvalPoint& point : data.evaluations)
      if (const auto it = by_epoch.find(point.epoch); it != by_epoch.end()) {
        point.projected_time = it->second->projected_time;
        point.bytes_sent = it->second->bytes_sent;
      }
    return;
  }
  // Per-step sums in step order: bytes over the worker ranks, projected time of worker 0.
  GroupedTotals per_step = totals_by(db, data, "step", "'bytes_sent', 'projected_time_step'");
  auto running = [&per_step](const char* key, std::vector<EvalPoint>& points, double EvalPoint::*field) {
    const std::map<std::int64_t, Total>& values = per_step[key];
    if (values.empty()) return;
    double sum = 0;
    auto it = values.begin();
    for (EvalPoint& point : points) {
      for (; it != values.end() && it->first < point.step; ++it) sum += it->second.sum;
      point.*field = sum;
    }
  };
  running(keys::kBytesSent, data.evaluations, &EvalPoint::bytes_sent);
  running(keys::kProjectedTimeStep, data.evaluations, &EvalPoint::projected_time);
}

// The step's parts of the run of `data` from its run_summary rows `summary` (collect_step_parts).
void fill_step_parts(storage::Database& db, const std::map<std::string, storage::Summary>& summary, RunData& data) {
  auto summary_count = [&summary](const char* key) {
    const auto it = summary.find(key);
    return it == summary.end() ? 0 : it->second.count + it->second.nan_count;
  };
  data.facts = storage::run_facts_of(db, data.run.id);
  // Every worker records train_loss and bytes_sent at every step; a server records only the
  // latter, so for a run recorded before its resolved world, more bytes_sent rows than train_loss
  // rows means server ranks took part.
  data.has_servers = data.facts.has_servers().value_or(summary_count(keys::kBytesSent) > summary_count(keys::kTrainLoss));
  const auto totals = step_totals(db, data, summary);
  data.bytes_sent = total_sum(totals, keys::kBytesSent);
  data.bytes_dense = total_sum(totals, keys::kBytesDense);
  data.compute = sum_of_means(totals, {keys::kTimeForward, keys::kTimeBackward, keys::kTimeOptimizer});
  data.compress = sum_of_means(totals, {keys::kTimeCompress, keys::kTimeDecompress});
  data.wait = mean_per_step(totals, keys::kTimeWait);
  data.communicate = sum_of_means(totals, {keys::kTimeCommunicate});
  data.overlapped = mean_per_step(totals, keys::kTimeOverlapped);  // diloco { overlap }: on applying steps only
  data.overlap_budget = mean_per_step(totals, keys::kTimeOverlapBudget);
  data.messages = sum_of_means(totals, {keys::kMessages});
  data.link_bytes = sum_of_means(totals, {keys::kLinkBytes});
  data.between_messages = sum_of_means(totals, {keys::kBetweenMessages});
  data.between_link_bytes = sum_of_means(totals, {keys::kBetweenLinkBytes});
  data.between_shared_bytes = sum_of_means(totals, {keys::kBetweenSharedBytes});
  data.projected_communicate = sum_of_means(totals, {keys::kProjectedTimeCommunicate});
}

}  // namespace

double RunData::best_metric(bool higher_is_better) const {
  double best = kNaN;
  for (const EvalPoint& e : evaluations)
    if (better_value(higher_is_better, e.test_metric, best)) best = e.test_metric;
  return best;
}

double RunData::compression_ratio() const {
  if (std::isnan(bytes_sent) || std::isnan(bytes_dense) || bytes_sent <= 0) return kNaN;
  return bytes_dense / bytes_sent;
}

bool RunData::full_precision() const {
  if (facts.resolved) return facts.resolved->compressor.full_precision;
  return compression_ratio() == 1.0;
}

ResolvedMetric choose_test_metric(storage::Database& db, const std::vector<ReportRun>& runs) {
  for (const auto& run : runs)
    if (const auto resolved = storage::run_facts_of(db, run.id).resolved) return resolved->test_metric;
  // Runs recorded before the resolved fact: a language model is the one that recorded perplexity.
  std::string key = keys::kTestAccuracy;
  storage::Statement q(db.handle(), "SELECT 1 FROM run_summary WHERE run_id = ?1 AND key = ?2");
  for (const auto& run : runs) {
    q.reset();
    q.bind_int64(1, run.id);
    q.bind_text(2, keys::kTestPerplexity);
    if (q.step()) key = keys::kTestPerplexity;
  }
  return {key, keys::goal_of(key) == Goal::Max};
}

RunData collect_step_parts(storage::Database& db, const ReportRun& run) {
  RunData data;
  data.run = run;
  fill_step_parts(db, storage::summary_of(db, run.id), data);
  return data;
}

RunData collect_run_data(storage::Database& db, const ReportRun& run, const std::string& metric) {
  RunData data;
  data.run = run;
  const auto summary = storage::summary_of(db, run.id);
  fill_step_parts(db, summary, data);
  if (const auto it = summary.find(metric); it != summary.end()) data.final_metric = it->second.last;
  if (const auto it = summary.find(keys::kModelParameters); it != summary.end() && it->second.last > 0)
    data.model_parameters = it->second.last;
  if (const auto it = summary.find(keys::kDecodedPayloads); it != summary.end())
    data.decoded_payloads = it->second.last;
  collect_step_quartiles(db, data);
  data.slow_rank = slow_rank_of(db, run.id, run.workers);
  if (changes_membership(run.config))
    data.member_changes = member_changes_of(db, run.id);
  collect_epochs(db, data, metric);
  collect_evaluations(db, data, metric);
  if (const auto it = data.facts.text.find(LayerCodecCosts::kFact); it != data.facts.text.end())
    data.layer_costs = LayerCodecCosts::from_json_text(it->second);
  // What the run resolved its network into is its link; runs recorded before the fact read it
  // back from their recorded network (experiment_runs.cpp).
  if (const auto& resolved = data.facts.resolved) {
    if (data.run.compressor == "none" && !resolved->compressor.full_precision) {
      data.run.optimizer_compresses = true;
      data.run.is_baseline = false;
    }
    data.run.link = resolved->link;
    data.run.emulated_bits_per_second = resolved->link && resolved->link_emulated ? resolved->link->bits_per_second : kNaN;
  } else {
    RecordedLink recorded = recorded_link(data.run.config);
    data.run.link = recorded.link;
    data.run.emulated_bits_per_second = recorded.emulated_bits_per_second;
  }
  return data;
}

}  // namespace laconic::reports
