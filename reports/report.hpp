#pragma once
// The entry point of `laconic report`: an experiment's comparison as report.md, a self-contained
// index.html, CSVs of every table and SVG / PNG figures drawn by gnuplot.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"
#include "reports/answer.hpp"
#include "reports/gnuplot.hpp"
#include "reports/report_model.hpp"
#include "storage/database.hpp"

namespace laconic::reports {

struct ReportOptions {
  /// Threshold of "time to target" in the test metric's unit, for every row; unset: each row's
  /// baseline less the tolerance (docs/reports.md, "The answer").
  std::optional<double> target{};
  GnuplotOptions gnuplot{};
  /// Links to project every configuration onto (laconic report --link), besides the runs' own.
  std::vector<LinkSpec> links{};
  /// Below the baseline: points of accuracy or percent of perplexity; unset:
  /// 0.5 points or 2%.
  std::optional<double> tolerance{};
  /// laconic report --baseline: the configuration column every other is judged against; unset:
  /// the baseline the runs recorded (TargetRule::baseline).
  std::optional<std::string> baseline{};
  /// laconic report --hardware: a profile every configuration is also projected onto.
  std::optional<HardwareProfile> hardware{};
  /// Sections other folders add after the answer (laconic report: advise's "Advice").
  std::vector<SectionProvider> added_sections{};
};

/// Where write_report() put its files, and what went wrong with the figures.
struct ReportPaths {
  std::string markdown;               ///< <out_dir>/report.md
  std::string html;                   ///< <out_dir>/index.html
  std::vector<std::string> csv;       ///< <out_dir>/tables/<slug>.csv, one per table
  std::string metric;                 ///< the test metric's key
  double target = 0;                  ///< the first row's time-to-target threshold (NaN if none)
  std::vector<std::string> targets;   ///< every row's target and where it came from, one line each
  std::vector<std::string> warnings;  ///< one per missing figure: "figure step_time missing: why"
};

/// Writes report.md, index.html, tables/*.csv and figures/* comparing the runs of `experiment`
/// into out_dir (created if missing). A figure gnuplot cannot draw is named as missing, with the
/// reason, in both documents and in `warnings`; the tables are written regardless. ConfigError
/// if the experiment has no runs (message lists the experiments that exist) or a file cannot be
/// written.
ReportPaths write_report(storage::Database& db, const std::vector<std::string>& experiments, const std::string& out_dir,
                         const ReportOptions& options = {});

/// The same for one experiment.
inline ReportPaths write_report(storage::Database& db, const std::string& experiment, const std::string& out_dir,
                                const ReportOptions& options = {}) {
  return write_report(db, std::vector<std::string>{experiment}, out_dir, options);
}

}  // namespace laconic::reports
