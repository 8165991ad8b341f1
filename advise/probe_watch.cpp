#include "advise/probe_watch.hpp"

#include <algorithm>
#include <cmath>

#include "advise/advice.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/format.hpp"
#include "reports/learning_curve.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/statement.hpp"

namespace laconic::advise {

using namespace reports;  // advise reads the report's model and answer throughout

namespace {

// How far behind before a probe that trains is dropped: what is left to learn (1 - accuracy, or
// the metric where lower is better) this many times the baseline's at the same step.
constexpr double kBehind = 1.5;

double left_to_learn(const reports::TestMetric& metric, double value) {
  return metric.higher_is_better ? 1 - value : value;
}

// What `at` has left to learn over what the baseline's probes had at the last evaluation at or
// before its step (their mean); NaN without one.
double left_ratio(const Advice& advice, const reports::CurvePoint& at) {
  for (const AdviceRow& row : advice.ranked)
    if (row.baseline) {
      double base = reports::kNaN;
      for (const reports::EvalSummary& e : row.summary->evaluations)
        if (static_cast<double>(e.step) <= at.step) base = e.metric.mean;
      return left_to_learn(advice.metric, at.value) / left_to_learn(advice.metric, base);
    }
  return reports::kNaN;
}

}  // namespace

ProbeWatch::ProbeWatch(std::string db, std::string experiment, LinkSpec link, std::int64_t probe_steps,
                       std::int64_t evaluations, std::optional<double> target)
    : db_(std::move(db)),
      experiment_(std::move(experiment)),
      link_(std::move(link)),
      probe_steps_(probe_steps),
      evaluations_(evaluations),
      target_(target) {}

std::string ProbeWatch::operator()(std::int64_t run_id) const {
  try {
    return check(run_id);
  } catch (const std::exception&) {
    return "";  // no baseline finished yet, a lock, ...: the probe trains on
  }
}

std::string ProbeWatch::check(std::int64_t run_id) const {
  auto db = storage::Database::open_read_only(db_);
  storage::Statement count(db->handle(),
                           "SELECT count(*) FROM metric_values v JOIN metric_keys k ON k.id = v.key_id "
                           "WHERE v.run_id = ?1 AND v.worker = 0 AND k.name IN ('test_accuracy', 'test_perplexity')");
  count.bind_int64(1, run_id);
  const std::int64_t evaluations = count.step() ? count.column_int64(0) : 0;
  if (seen_[run_id] == evaluations) return "";  // nothing new since it was last looked at
  seen_[run_id] = evaluations;
  const auto row = storage::find_run(*db, run_id);
  if (!row || reports::parse_run(*row, row->config).is_baseline) return "";
  reports::TargetRule rule;
  rule.value = target_;
  const auto model = reports::build_model(*db, {experiment_}, rule);  // the probes that finished
  const Advice advice = advice_of(*model, link_);
  if (std::isnan(advice.target)) return "";
  std::vector<reports::CurvePoint> curve;
  for (const MetricRecord& m : storage::metrics_of(*db, run_id, advice.metric.key))
    if (m.worker == 0) curve.push_back({static_cast<double>(m.step), m.value});
  const auto evaluated = std::count_if(curve.begin(), curve.end(), [](const auto& p) { return p.step > 0; });
  const std::int64_t needed = std::max<std::int64_t>(reports::kMinCurvePoints + 1, (evaluations_ + 1) / 2);
  if (evaluated < needed || advice.metric.reaches(curve.back().value, advice.target)) return "";
  const reports::ExtrapolatedSteps steps =
      reports::extrapolate_steps(curve, advice.metric, advice.target, 10.0 * static_cast<double>(probe_steps_));
  if (steps.why_not.empty() || steps.points < reports::kMinCurvePoints) return "";  // on track, or too few to say
  // A curve from half a probe is noisy: drop only a probe also well behind the baseline's at the
  // same step, with more than kBehind times as much left to learn.
  const double behind = left_ratio(advice, curve.back());
  if (!(behind > kBehind)) return "";
  return str_cat("after ", evaluated, " of its ", evaluations_, " evaluations (step ",
                 static_cast<std::int64_t>(curve.back().step), " of ", probe_steps_, ") it had ", reports::fixed(behind, 1),
                 "x as much left to learn as the baseline at that step, and ", steps.why_not);
}

}  // namespace laconic::advise
