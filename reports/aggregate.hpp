#pragma once
// Per-configuration numbers: each run's figure first, then mean ± sample std over its seeds.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/resolved_run.hpp"
#include "engine/core/units.hpp"
#include "reports/configurations.hpp"
#include "reports/stats.hpp"

namespace laconic::reports {

/// What the report calls the test metric and which way is better.
struct TestMetric {
  std::string key;    ///< "test_accuracy" or "test_perplexity"
  std::string label;  ///< "test accuracy"; "validation perplexity" on perldoc
  bool higher_is_better = true;
  int digits = 4;  ///< decimals in tables

  /// True when `value` reaches `target` in the metric's direction.
  bool reaches(double value, double target) const;
  /// `a` is better than `b`, or `b` is NaN and `a` is not (better_value).
  bool better(double a, double b) const { return better_value(higher_is_better, a, b); }
};

/// The report's name for a resolved test metric ("test accuracy"), its direction and its decimals.
TestMetric test_metric_of(const ResolvedMetric& metric);

/// One epoch of a configuration: means over the seeds that recorded it.
struct EpochSummary {
  std::int64_t epoch = 0;
  Stats metric{kNaN, kNaN, 0};
  double measured_time = kNaN;       ///< s, mean over seeds of the cumulative measured time
  double projected_time = kNaN;      ///< s, mean over seeds of the cumulative projected time
  double bits_per_parameter = kNaN;  ///< mean over seeds of 8 * payload_bytes / model_parameters
};

/// One evaluation step of a configuration (its runs evaluate at the same steps): means over the
/// seeds that evaluated there.
struct EvalSummary {
  std::int64_t step = 0;         ///< steps taken
  double epochs_trained = kNaN;  ///< step / steps per epoch: 1.0 at the end of the first epoch
  Stats metric{kNaN, kNaN, 0};
  double measured_time = kNaN;   ///< s, mean over seeds of EvalPoint::measured_time
  double projected_time = kNaN;  ///< s, mean over seeds of EvalPoint::projected_time
};

struct ConfigSummary {
  const Configuration* config = nullptr;
  /// Over seeds: the runs of one seed (its repeats, `repeat = N`) are averaged first.
  Stats final_metric{kNaN, kNaN, 0};
  Stats compression{kNaN, kNaN, 0};  ///< achieved compression ratio per run
  Stats compute{kNaN, kNaN, 0};      ///< s per step and worker
  Stats compress{kNaN, kNaN, 0};
  Stats wait{kNaN, kNaN, 0};
  Stats communicate{kNaN, kNaN, 0};
  Stats overlapped{kNaN, kNaN, 0};        ///< exchange hidden behind backward, s per step and worker
  Stats overlap_budget{kNaN, kNaN, 0};    ///< diloco { overlap }: compute that can hide it, s per step
  Stats messages{kNaN, kNaN, 0};          ///< per step and worker
  Stats link_bytes{kNaN, kNaN, 0};        ///< per step and worker
  /// On islands: the part of them between islands, and what the link between carried (RunData).
  Stats between_messages{kNaN, kNaN, 0}, between_link_bytes{kNaN, kNaN, 0}, between_shared_bytes{kNaN, kNaN, 0};
  /// On islands: the runs' own link inside an island (their resolved islands); nothing otherwise.
  std::optional<LinkSpec> inside;
  Stats step_median{kNaN, kNaN, 0};       ///< each run's median measured step, over seeds
  double step_q1 = kNaN, step_q3 = kNaN;  ///< means over seeds of each run's quartiles
  Stats projected_communicate{kNaN, kNaN, 0};
  std::vector<EpochSummary> epochs;
  std::vector<EvalSummary> evaluations;  ///< ordered by step
};

ConfigSummary summarize(const Configuration& config);

/// Stats over the configuration's seeds of `get`, each seed's runs (its repeats: one
/// seed, runs.repetition 1, 2, ...) averaged first: repeats of a seed train alike, so they are one sample of what
/// depends on the seed.
Stats over_seeds(const Configuration& config, double (*get)(const RunData&));

/// `value`, or 0 for a part of the step a configuration did not record (NaN).
inline double or_zero(double value) { return std::isnan(value) ? 0 : value; }

/// compute + compress + wait as measured, s per step and worker (parts not recorded as 0): the
/// step without its communication.
double local_seconds(const ConfigSummary& s);

/// local_seconds() plus the communication as measured (time_communicate): the step as it ran.
double measured_step(const ConfigSummary& s);

/// local_seconds() plus the communication projected onto the runs' link as they ran
/// (projected_time_communicate); NaN where they recorded none.
double projected_step(const ConfigSummary& s);

/// Compute utilization: compute (forward, backward, optimizer) over the whole step, on the runs'
/// link where they were projected onto one (projected_step), else as they ran (measured_step).
/// What the step-time table, `laconic ui` and `laconic runs --wide` show; in (0, 1].
double compute_utilization(const ConfigSummary& s);

/// What a step's exchanges sent, means per step and worker rank, for projecting onto a link. On
/// islands (network = cluster { }), also the part between islands and the runs' own link inside
/// an island, which a projection onto another link keeps for the messages inside.
struct RecordedTraffic {
  double messages = kNaN, link_bytes = kNaN;
  double between_messages = kNaN, between_link_bytes = kNaN, between_shared_bytes = kNaN;
  std::optional<LinkSpec> inside;
  /// Islands whose inside link is known: `link` then stands for the link between islands only.
  bool on_islands() const { return inside.has_value() && !std::isnan(between_shared_bytes); }
};
RecordedTraffic traffic_of(const RunData& run);
RecordedTraffic traffic_of(const ConfigSummary& s);

/// The communication of a step whose exchange sent `traffic` (means per step) on `link`, less
/// `overlap_budget` (diloco { overlap }: the inner steps' compute the exchanges ran under, mean
/// per step; NaN for none), at least 0. On islands the messages inside stay on the runs' inside
/// link and those between go onto `link`, their phases' load included (between_shared_bytes), as
/// network = cluster { } projects them; elsewhere every message goes onto `link`. Exact when the
/// exchanges are alike: each is projected whole, less its own budget, and the means share the one
/// factor of steps per exchange. Every projection of recorded messages onto a link goes through it.
double communicate_on_link(const LinkSpec& link, const RecordedTraffic& traffic, double overlap_budget);

/// local_seconds() plus the messages the runs recorded (`messages`, `link_bytes`) projected onto
/// `link`; NaN when the runs did not record them. Under diloco { overlap } only the part of the
/// projection beyond the compute the exchanges ran under (time_overlap_budget) counts.
double step_on_link(const ConfigSummary& s, const LinkSpec& link);

/// " Ranks as threads (placement = threads()): A, B; ..." naming the configurations whose runs
/// placed their ranks as threads, whose times are derived and projected rather than measured;
/// "" when none did.
std::string thread_ranks_note(const std::vector<ConfigSummary>& summaries);

/// What a column of times "measured" on the runs is for these configurations: "measured" (no
/// thread ranks), `for_threads` (every configuration's ranks were threads: "derived", or
/// "projected" for communication), or "measured (thread ranks: derived)" for a mix.
std::string measured_word(const std::vector<ConfigSummary>& summaries, const std::string& for_threads);

}  // namespace laconic::reports
