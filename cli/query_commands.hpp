#pragma once
// The report command: it opens the database read-only, so it works while a sweep writes. The
// other read-side commands are in runs_command.hpp, inspect_commands.hpp and sql_commands.hpp.
#include <optional>
#include <string>
#include <vector>

namespace laconic::cli {

/// The options of `laconic report`.
struct ReportArgs {
  std::string db;
  std::vector<std::string> experiments;  ///< one, or several compared side by side
  std::string out;                       ///< "" for laconic-reports/EXPERIMENT (A-vs-B for several)
  std::optional<double> target;          ///< time-to-target threshold; unset: derived from the runs
  std::optional<double> tolerance;       ///< below the baseline; unset: 0.5 points / 2%
  std::optional<std::string> baseline;   ///< --baseline: a configuration's compressor column; unset: the runs' own
  std::string gnuplot = "gnuplot";
  bool allow_missing_figures = false;  ///< exit 0 even when gnuplot could not draw a figure
  std::vector<std::string> links;      ///< --link: "100Mbit", "1Gbit,50us" (engine/core/units.hpp)
  std::string hardware;                ///< --hardware: a hardware profile's path; "" for none
};

/// Exit status of `laconic report` when a figure could not be drawn (the report's files are
/// written, each missing figure named in them) and --allow-missing-figures was not given.
inline constexpr int kMissingFiguresExitStatus = 3;

/// `laconic report`: writes index.html, report.md, tables/*.csv and figures/* for an experiment,
/// prints their paths and the target used, and warns on stderr about each missing figure; exits
/// kMissingFiguresExitStatus when one is missing unless `allow_missing_figures`.
int report_command(const ReportArgs& args);

}  // namespace laconic::cli
