#pragma once
// The numbers a report shows for one FINISHED run, read from storage with indexed lookups only:
// run_summary for totals and means, and the (run_id, key) index of metrics for per-epoch values.
// Parameter-server ranks (>= the run's workers) are left out of every figure here.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/layer_costs.hpp"
#include "engine/core/resolved_run.hpp"
#include "reports/churn.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/slow_rank.hpp"
#include "storage/database.hpp"
#include "storage/run_facts.hpp"

namespace laconic::reports {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One evaluation of worker 0 on the test split: every epoch's end, and every `eval_every` steps
/// when the run set it.
struct EvalPoint {
  std::int64_t step = 0;      ///< steps taken when the evaluated weights were ready
  std::int64_t epoch = 0;     ///< the epoch it fell in
  double test_metric = kNaN;  ///< worker 0's test metric
  /// Seconds since worker 0 started training, when the evaluated weights were ready (the
  /// record's wall time; earlier evaluations included).
  double measured_time = kNaN;
  /// The sum of worker 0's projected_time_step over the steps taken.
  double projected_time = kNaN;
  double bytes_sent = kNaN;  ///< handed to Gloo by the worker ranks over the steps taken
};

/// One epoch of a run; NaN where nothing was recorded.
struct EpochPoint {
  std::int64_t epoch = 0;
  double test_metric = kNaN;  ///< worker 0's test metric (accuracy or perplexity)
  /// Seconds since the start of training at the end of this epoch, worker 0: the sum of its
  /// epoch_time (measured wall time) up to here.
  double measured_time = kNaN;
  /// The same, projected: the sum of worker 0's projected_time_step up to the epoch's last step.
  double projected_time = kNaN;
  /// Bytes handed to Gloo by the worker ranks from the start up to the end of this epoch.
  double bytes_sent = kNaN;
  /// Mean payload_bytes per step and worker rank within this epoch.
  double payload_bytes = kNaN;
};

/// `a` is a better value of a metric than `b` (higher or lower, as the metric goes), or `b` is
/// NaN and `a` is not: the one comparison behind every "best" of the reports.
inline bool better_value(bool higher_is_better, double a, double b) {
  return !std::isnan(a) && (std::isnan(b) || (higher_is_better ? a > b : a < b));
}

struct RunData {
  ReportRun run;
  double final_metric = kNaN;  ///< last recorded test metric
  double bytes_sent = kNaN;    ///< sum over steps and worker ranks, bytes
  double bytes_dense = kNaN;   ///< sum over steps and worker ranks, bytes
  /// Mean seconds per step and worker rank: forward + backward + optimizer.
  double compute = kNaN;
  double compress = kNaN;     ///< compress + decompress
  double wait = kNaN;         ///< time_wait: blocked until the slowest worker arrived, measured; per step, over every step (a schedule that exchanges once a round waits once a round)
  double communicate = kNaN;  ///< time_communicate, measured
  /// time_overlapped per step, over every step: exchange hidden behind backward (allreduce {
  /// overlap = true }) or under inner steps (diloco { overlap }); NaN when the run did not overlap.
  double overlapped = kNaN;
  /// time_overlap_budget per step, over every step (diloco { overlap }): the compute that can
  /// hide the exchanges' communication; NaN when the run had no such exchange.
  double overlap_budget = kNaN;
  /// Means per step and worker rank of `messages` and `link_bytes`: what projecting onto
  /// another link needs (NaN for runs recorded before laconic stored them).
  double messages = kNaN, link_bytes = kNaN;
  /// Of those, the means on the links between islands (network = cluster { }); NaN for a run on
  /// one link.
  double between_messages = kNaN, between_link_bytes = kNaN;
  /// The mean bytes the link between islands carried in those messages' phases (load included).
  double between_shared_bytes = kNaN;
  /// Quartiles of the measured time_step over the steps of the worker ranks (s).
  double step_q1 = kNaN, step_median = kNaN, step_q3 = kNaN;
  double projected_communicate = kNaN;  ///< projected_time_communicate on the run's link
  double model_parameters = kNaN;       ///< trainable parameters (metric model_parameters)
  /// Payloads worker 0 decoded per compressed gradient (metric decoded_payloads); NaN for runs
  /// recorded before laconic stored it.
  double decoded_payloads = kNaN;
  /// Ranks beyond the workers took part: the resolved world is larger than its workers (for runs
  /// recorded before that fact: they recorded more bytes_sent rows than train_loss rows).
  bool has_servers = false;
  /// What run_facts say of it, read once (storage/run_facts.hpp): its resolved run (ranks,
  /// compressor's nature, link), rank clock, host load, overrides, advice, why it was dropped.
  storage::RunFacts facts;
  /// Its compressor's costs on each layer of its model, as `laconic advise` measured them (run
  /// fact `layer_costs`); empty layers when not measured.
  LayerCodecCosts layer_costs;
  /// Which of its ranks the others waited for, and each phase's slowest rank (collect_run_data).
  SlowRank slow_rank;
  /// Churn: the steps at which its workers present changed (reports/churn.hpp); empty for a calm run.
  std::vector<MemberChange> member_changes;
  std::vector<EpochPoint> epochs;      ///< ordered by epoch
  std::vector<EvalPoint> evaluations;  ///< ordered by step
  /// Steps of each epoch: the steps taken at the first epoch's last evaluation (its end); 0 when
  /// no epoch was evaluated.
  std::int64_t steps_per_epoch = 0;

  /// The best test metric any evaluation reached (max, or min when lower is better); NaN if none.
  double best_metric(bool higher_is_better) const;

  /// sum(bytes_dense) / sum(bytes_sent) over worker ranks; NaN when nothing was sent.
  double compression_ratio() const;

  /// Its compressor exchanged the gradient itself in fp32, with no coding work (none): as the
  /// resolved run says, or, for runs recorded before it, when the bytes it sent were exactly the
  /// dense bytes.
  bool full_precision() const;
};

/// The report's test metric and its direction: what the runs resolved it to (ResolvedRun's
/// test_metric: test_perplexity for a language model, else test_accuracy); for runs recorded
/// before that fact, test_perplexity if any of them recorded it, else test_accuracy.
ResolvedMetric choose_test_metric(storage::Database& db, const std::vector<ReportRun>& runs);

/// Gathers the numbers of `run`; `metric` is the key of the test metric.
RunData collect_run_data(storage::Database& db, const ReportRun& run, const std::string& metric);

/// Of those, only the mean step's parts (compute, compress, wait, communicate, bytes, messages,
/// the facts), from the run's run_summary rows (and, for a run with servers, the metrics table):
/// what `laconic runs` shows without reading every metric.
RunData collect_step_parts(storage::Database& db, const ReportRun& run);

}  // namespace laconic::reports
