#pragma once
// The answer a report gives, written once: the baseline every configuration is judged against,
// the target each row of the grid is timed to, every configuration's time to it on a link with
// its 95% interval, its verdict against the baseline there (faster, slower, within noise, or
// inconclusive with what would decide it) and its accuracy cost. The summary, "Time and bytes
// to target", "Does it pay off?", "Projected onto other links", the CSVs and `laconic ui` are
// views of it (docs/reports.md, "The answer").
#include <optional>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"
#include "reports/aggregate.hpp"

namespace laconic::reports {

/// How the baseline and the target are chosen: `laconic report --baseline`, `--target` and
/// `--tolerance`.
struct TargetRule {
  std::optional<double> value;  ///< one threshold for every row, in the metric's unit
  /// How far below the row's baseline the target lies: points of accuracy (0.5 = 0.005), or
  /// percent of perplexity; unset: default_tolerance().
  std::optional<double> tolerance;
  /// The configuration column every other is judged against ("fp16", "topk ratio=0.01"); unset:
  /// the compressor each run's configuration records as its baseline (`baseline = ...`, none by
  /// default).
  std::optional<std::string> baseline;
};

/// 0.5 (points of accuracy) or 2 (percent of perplexity).
double default_tolerance(const TestMetric& metric);

/// "0.5 points" or "2%": a tolerance, or an accuracy cost, in the metric's own words.
std::string tolerance_text(const TestMetric& metric, double tolerance);

/// A verdict of "within noise" needs the 95% interval of the time ratio inside 1 ± this.
inline constexpr double kEquivalenceMargin = 0.10;

/// The threshold one row of the grid is timed to, and what it is judged against.
struct RowTarget {
  std::string row;  ///< Configuration::row
  double value = kNaN;
  /// The row's baseline configuration: the one whose compressor is the baseline (TargetRule);
  /// what the target, the accuracy cost and every verdict are measured against. Null when the
  /// row has none.
  const ConfigSummary* baseline = nullptr;
  std::string source;  ///< for the reader: "--target", "none reached 0.8522 on average, less 0.5 points"
};

/// A link the answer is given for.
struct AnswerLink {
  std::string name;  ///< "100Mbit, 1ms" (the runs' own, as the experiment wrote it), "1 Gbit/s, 50 us"
  /// The link; unset: the runs' own where they recorded none (an older laconic: their
  /// recorded projected_time_communicate).
  std::optional<LinkSpec> spec;
  /// The runs' own link: where they recorded no messages, their recorded projected communication.
  bool own = false;
  /// Set: each step projected onto this hardware (reports/hardware_step.hpp) instead of the
  /// compute and compression measured here.
  const HardwareProfile* hardware = nullptr;
  /// Set: each run's compute (forward, backward and optimizer: the same work for every
  /// configuration of a row, which no compressor changes) taken as its row's mean over every run
  /// (Answer::shared_compute) instead of its own, so that the host's noise in it does not tell the
  /// configurations apart: laconic advise's steps. Nothing with `hardware`, whose compute is the
  /// profile's.
  bool shared_compute = false;
  /// Set: each run's step as it ran, its communication as measured (time_communicate) rather
  /// than projected: the runs' own times, on whatever link they trained on (an emulated one, or
  /// loopback). Answer::measured_link.
  bool measured = false;
};

/// A configuration's time to its row's target on one link.
struct TimeToTarget {
  std::size_t reached = 0;  ///< runs that reached the target
  std::size_t runs = 0;
  double steps = kNaN;  ///< mean over the runs that reached it
  /// Geometric mean over the runs that reached it of (their steps x their step on the link);
  /// NaN when none did or the link has no time for them.
  double seconds = kNaN;
  /// Its 95% interval: Student's t over those runs' log times (so never below zero, and as
  /// skewed as times are), widened by the configuration's disturbance (Verdict::noise); NaN
  /// with fewer than two runs reaching it.
  double low = kNaN, high = kNaN;

  bool all_reached() const { return runs > 0 && reached == runs; }
};

/// "16.1 s [9.22, 28.0]", "16.1 s (one run: no interval)", "15.4 s (1 of 2 runs reached it)",
/// "not reached (0 of 2 runs)"; "-" without a time.
std::string time_text(const TimeToTarget& t);

/// How a configuration compares with its row's baseline on a link.
enum class Versus {
  Baseline,      ///< it is the baseline
  Faster,        ///< the 95% interval of its time ratio lies below 1
  Slower,        ///< ... above 1
  WithinNoise,   ///< ... inside 1 ± kEquivalenceMargin
  Inconclusive,  ///< none of these: more seeds would tell (Comparison::more_seeds, why)
  NotReached,    ///< none of its runs reached the target
  Unknown,       ///< no baseline in its row, the baseline never reached it, or no time on the link
};

/// "faster", "within noise", "inconclusive", ...
const char* versus_word(Versus v);

struct Comparison {
  Versus versus = Versus::Unknown;
  double change = kNaN;  ///< its time / the baseline's - 1 (geometric means of the runs that reached it)
  /// The 95% interval of that change: Welch's over the two configurations' log times (a run
  /// that never reached the target counted at its last evaluation, a bound), widened by both
  /// disturbances; NaN with one run on either side.
  double low = kNaN, high = kNaN;
  /// Inconclusive: about how many more seeds of each would decide it, from the spread these runs
  /// show (the interval narrowing as 1/sqrt(runs)); NaN when no number of seeds would.
  double more_seeds = kNaN;
  std::string why;  ///< Inconclusive: "one run of none: no interval", "1 of 2 runs reached the target", ...
  /// Some run of either side never reached the target: `change` is of the runs that did.
  bool bounded = false;
};

/// "faster (-41% [-60%, -20%])", "inconclusive (+3% [-40%, +75%]; about 6 more seeds)",
/// "not reached (0 of 2 runs)", "baseline", "-".
std::string comparison_text(const Comparison& c, const TimeToTarget& t);

/// What the answer says about one configuration, whatever the link.
struct Verdict {
  const ConfigSummary* summary = nullptr;
  const RowTarget* target = nullptr;
  bool baseline = false;  ///< it is its row's baseline
  /// Final metric minus the baseline's, turned into a loss: points of accuracy lost, or percent
  /// of perplexity gained (negative: better than the baseline); NaN for the baseline itself.
  double cost = kNaN;
  double cost_half_width = kNaN;  ///< 95% (Welch) over seeds; NaN with one seed on either side
  /// Why its times are less certain than their spread says, and by how much they are widened:
  /// "compute +30% against the baseline", "host busier than its cores (x1.4)".
  std::vector<std::string> noise;
  double disturbance = 0;  ///< s per step added to the noise for those reasons
  /// The part of `disturbance` that is compute unlike the baseline's: none where the steps take
  /// the row's shared compute (AnswerLink::shared_compute).
  double compute_disturbance = 0;
};

/// "costs 1.17 points [0.42, 1.92]", "gains 0.3 points", "baseline", "-".
std::string cost_text(const TestMetric& metric, const Verdict& v);

/// Bandwidths "Does it pay off?" scans: 10 Mbit/s to 100 Gbit/s, ten per decade.
std::vector<double> scanned_bandwidths();

/// "100 Mbit/s", "2.51 Gbit/s".
std::string rate_text(double bits_per_second);

/// A configuration against the baseline at every scanned bandwidth.
struct BandwidthScan {
  std::vector<Versus> versus;  ///< one per scanned_bandwidths()
  /// The highest bandwidth at which it is faster beyond the noise; NaN if none.
  double break_even = kNaN;
  /// The highest bandwidth at which its time is below the baseline's, intervals aside (the point
  /// estimates' crossing: all one seed can say); NaN if none.
  double crossover = kNaN;
  /// "faster up to 794 Mbit/s; inconclusive from 1 Gbit/s to 3.16 Gbit/s; slower from 3.98 Gbit/s",
  /// "within noise at every bandwidth from 10 Mbit/s to 100 Gbit/s", "not reached (0 of 2 runs)";
  /// where the crossing lies elsewhere, "...; point estimates: faster up to 251 Mbit/s".
  std::string text;
};

/// Every configuration's verdict, and their times on any link.
class Answer {
 public:
  /// `summaries` must outlive the answer (one per grid configuration). ConfigError when
  /// `rule.baseline` names no configuration.
  Answer(const Grid& grid, const std::vector<ConfigSummary>& summaries, const TestMetric& metric,
         const TargetRule& rule);

  const TestMetric& metric() const { return metric_; }
  const std::vector<RowTarget>& targets() const { return targets_; }
  const RowTarget& target_of(const ConfigSummary& s) const;
  const Verdict& verdict(const ConfigSummary& s) const;
  const std::vector<Verdict>& verdicts() const { return verdicts_; }
  /// True when every row's target is the same number (one --target, or one row).
  bool one_target() const;
  /// True for its row's baseline configuration.
  bool is_baseline(const ConfigSummary& s) const { return target_of(s).baseline == &s; }
  /// Where the baseline came from: "none (each run's configuration: baseline = none(), the
  /// default)", "fp16 (--baseline)".
  const std::string& baseline_source() const { return baseline_source_; }

  TimeToTarget time_to_target(const ConfigSummary& s, const AnswerLink& link) const;
  /// Against its row's baseline on `link`.
  Comparison compare(const ConfigSummary& s, const AnswerLink& link) const;
  /// The link the runs of `s` were projected onto as they ran ("100Mbit, 1ms").
  AnswerLink own_link(const ConfigSummary& s) const;
  /// The runs' steps as measured (AnswerLink::measured): time_to_target on it is a time to the
  /// target as the runs took it, computed as every other time of the answer is.
  static AnswerLink measured_link();
  /// The runs' own link at another bandwidth, its latency and overheads kept (50 us a message
  /// where the runs name no link); with `hardware`, steps on that hardware.
  AnswerLink scanned_link(const ConfigSummary& s, double bits_per_second,
                          const HardwareProfile* hardware = nullptr) const;
  /// Over scanned_bandwidths(), with the steps measured here or projected onto `hardware`;
  /// with `shared_compute`, each with its row's shared compute (AnswerLink::shared_compute).
  BandwidthScan scan(const ConfigSummary& s, const HardwareProfile* hardware = nullptr,
                     bool shared_compute = false) const;
  /// s per step and worker on `link`: the mean over the runs of `s` of each one's step there
  /// (compute, compress and wait as measured, or the row's shared compute, or the hardware's,
  /// and its messages projected onto the link); NaN where they recorded none.
  double step(const ConfigSummary& s, const AnswerLink& link) const;
  /// The mean compute (forward, backward, optimizer) per step over every run of the row of `s`:
  /// the same work for each of its configurations; NaN where none recorded it.
  double shared_compute(const ConfigSummary& s) const;

 private:
  struct Sample;
  Sample sample(const ConfigSummary& s, const AnswerLink& link) const;
  /// s per step its times are widened by on `link` (Verdict::disturbance, less its compute part
  /// where the steps take the shared compute).
  double disturbance(const ConfigSummary& s, const AnswerLink& link) const;

  const std::vector<ConfigSummary>& summaries_;
  TestMetric metric_;
  std::string baseline_source_;
  std::vector<RowTarget> targets_;
  std::vector<Verdict> verdicts_;  ///< same order as summaries_
};

/// "1 ms", "50 us": a latency as the answer's link names write it.
std::string latency_text(double seconds);

/// "fp16: compute -10% against the baseline, which no compressor changes. qsgd levels=16: ...":
/// each verdict's noise (Verdict::noise) under its configuration's label, in the verdicts'
/// order; "" when none has any. The summary's and the advice's words for it.
std::string noise_text(const std::vector<const Verdict*>& verdicts);

}  // namespace laconic::reports
