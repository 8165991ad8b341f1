#pragma once
// The answer a report gives, written once: the target each row of the grid is timed to, every
// configuration's time to it on a link with the noise around that time, its accuracy cost
// against dense, and the bandwidths at which it beats dense beyond the noise. The summary,
// "Does it pay off?" and "Projected onto other links" are views of it (docs/reports.md, "The
// answer").
#include <optional>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"
#include "reports/aggregate.hpp"

namespace laconic::reports {

/// How the target is chosen: `laconic report --target` and `--tolerance`.
struct TargetRule {
  std::optional<double> value;  ///< one threshold for every row, in the metric's unit
  /// How far below the row's best dense configuration the target lies: points of accuracy
  /// (0.5 = 0.005), or percent of perplexity; unset: default_tolerance().
  std::optional<double> tolerance;
};

/// 0.5 (points of accuracy) or 2 (percent of perplexity).
double default_tolerance(const TestMetric& metric);

/// "0.5 points" or "2%": a tolerance, or an accuracy cost, in the metric's own words.
std::string tolerance_text(const TestMetric& metric, double tolerance);

/// The threshold one row of the grid is timed to, and where it came from.
struct RowTarget {
  std::string row;  ///< Configuration::row
  double value = kNaN;
  /// The row's dense configuration with the best mean final metric (none or fp16): what the
  /// target and the accuracy cost are measured against; null when the row has none.
  const ConfigSummary* baseline = nullptr;
  std::string source;  ///< for the reader: "--target", "none reached 0.8522 on average, less 0.5 points"
};

/// A link the answer is given for: the one each run was projected onto as it ran (its recorded
/// projected_time_communicate), or another one (from the messages the runs recorded).
struct AnswerLink {
  std::string name;              ///< "1Gbit, 50us", "100Mbit"
  std::optional<LinkSpec> spec;  ///< unset: the runs' own link
  /// Set: each step projected onto this hardware (reports/hardware_step.hpp) instead of the
  /// compute and compression measured here.
  const HardwareProfile* hardware = nullptr;
};

/// A configuration's time to its row's target on one link, and the noise around it.
struct TimeToTarget {
  std::size_t reached = 0;  ///< runs that reached the target
  std::size_t runs = 0;
  double steps = kNaN;    ///< mean over the runs that reached it
  double seconds = kNaN;  ///< mean over those runs of (their steps x their step on the link)
  /// The noise around `seconds`: the half-width of its 95% interval over the runs (two or more
  /// reached it), else steps x half the interquartile range of the run's measured step (on other
  /// hardware, that range scaled by the projected step over the measured median); widened by the
  /// configuration's disturbance (Verdict::noise), which other hardware's profile does not have.
  /// NaN when nothing reached the target.
  double half_width = kNaN;

  bool all_reached() const { return runs > 0 && reached == runs; }
};

/// How a configuration compares with its row's fastest dense configuration on a link.
enum class Versus {
  Baseline,     ///< it is dense itself
  Faster,       ///< reaches the target sooner, beyond the noise
  Slower,       ///< later, beyond the noise
  WithinNoise,  ///< the two intervals overlap
  NotReached,   ///< some of its runs never reached the target: never called a winner
  Unknown,      ///< no dense configuration in its row reached the target, or no time on the link
};

struct Comparison {
  Versus versus = Versus::Unknown;
  double change = kNaN;  ///< (its time - dense's) / dense's
};

/// "faster (-41%)", "within noise (+3%)", "not reached (1/2 runs)", ...
std::string comparison_text(const Comparison& c, const TimeToTarget& t);

/// What the answer says about one configuration, whatever the link.
struct Verdict {
  const ConfigSummary* summary = nullptr;
  const RowTarget* target = nullptr;
  bool dense = false;  ///< compressor none or fp16
  /// Final metric minus the baseline's, turned into a loss: points of accuracy lost, or percent
  /// of perplexity gained (negative: better than dense); NaN for the baseline itself.
  double cost = kNaN;
  double cost_half_width = kNaN;  ///< 95% (Welch) over seeds; NaN with one seed on either side
  /// Why its times are less certain than their spread says, and by how much they are widened:
  /// "compute +30% against dense", "host busier than its cores (x1.4)".
  std::vector<std::string> noise;
  double disturbance = 0;  ///< s per step added to the noise for those reasons
};

/// "costs 1.17 points [0.42, 1.92]", "gains 0.3 points", "-" for the baseline.
std::string cost_text(const TestMetric& metric, const Verdict& v);

/// Bandwidths "Does it pay off?" scans: 10 Mbit/s to 100 Gbit/s, ten per decade, 50 us per message.
std::vector<double> scanned_bandwidths();

/// "100 Mbit/s", "2.51 Gbit/s".
std::string rate_text(double bits_per_second);

/// The link "Does it pay off?" projects onto at one scanned bandwidth: `rate`, 50 us per message;
/// with `hardware`, steps on that hardware.
AnswerLink scanned_link(double bits_per_second, const HardwareProfile* hardware = nullptr);

/// A configuration against dense at every scanned bandwidth.
struct BandwidthScan {
  std::vector<Versus> versus;  ///< one per scanned_bandwidths()
  /// The highest bandwidth at which it is faster beyond the noise; NaN if none.
  double break_even = kNaN;
  /// "faster up to 794 Mbit/s; within noise from 1 Gbit/s to 3.16 Gbit/s; slower from 3.98 Gbit/s",
  /// "within noise at every bandwidth from 10 Mbit/s to 100 Gbit/s", "not reached (1/2 runs)".
  std::string text;
};

/// Every configuration's verdict, and their times on any link.
class Answer {
 public:
  /// `summaries` must outlive the answer (one per grid configuration).
  Answer(const Grid& grid, const std::vector<ConfigSummary>& summaries, const TestMetric& metric,
         const TargetRule& rule);

  const TestMetric& metric() const { return metric_; }
  const std::vector<RowTarget>& targets() const { return targets_; }
  const RowTarget& target_of(const ConfigSummary& s) const;
  const Verdict& verdict(const ConfigSummary& s) const;
  const std::vector<Verdict>& verdicts() const { return verdicts_; }
  /// True when every row's target is the same number (one --target, or one row).
  bool one_target() const;

  TimeToTarget time_to_target(const ConfigSummary& s, const AnswerLink& link) const;
  /// Against the fastest dense configuration of its row on `link` that reached the target.
  Comparison compare(const ConfigSummary& s, const AnswerLink& link) const;
  /// Over scanned_bandwidths(), with the steps measured here or projected onto `hardware`.
  BandwidthScan scan(const ConfigSummary& s, const HardwareProfile* hardware = nullptr) const;
  /// The link the runs of `s` were projected onto as they ran ("1Gbit, 50us").
  AnswerLink own_link(const ConfigSummary& s) const;

 private:
  const ConfigSummary* fastest_dense(const ConfigSummary& s, const AnswerLink& link, TimeToTarget* time) const;

  const Grid& grid_;
  const std::vector<ConfigSummary>& summaries_;
  TestMetric metric_;
  std::vector<RowTarget> targets_;
  std::vector<Verdict> verdicts_;  ///< same order as summaries_
};

/// Compressor none or fp16: what compression is measured against.
bool is_dense(const ConfigSummary& s);

}  // namespace laconic::reports
