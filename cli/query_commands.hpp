#pragma once
// The read-side commands: they open the database read-only, so they work while a sweep writes.
#include <optional>
#include <string>

namespace laconic::cli {

/// `laconic runs`: one line per run (id, experiment, run, status, final test accuracy, bytes
/// sent, wall time).
int runs_command(const std::string& db, const std::optional<std::string>& experiment,
                 const std::optional<std::string>& status);

/// The options of `laconic report`.
struct ReportArgs {
  std::string db;
  std::string experiment;
  std::string out;                ///< "" for laconic-reports/EXPERIMENT
  std::optional<double> target;   ///< time-to-target threshold; unset: derived from the runs
  std::string gnuplot = "gnuplot";
};

/// `laconic report`: writes index.html, report.md, tables/*.csv and figures/* for an experiment,
/// prints their paths and the target used, and warns on stderr about each missing figure.
int report_command(const ReportArgs& args);

}  // namespace laconic::cli
