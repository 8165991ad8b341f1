#pragma once
// Builds the document model of an experiment's comparison report from storage, with the gnuplot
// input of its figures (drawn later by write_report).
#include <optional>
#include <string>
#include <vector>

#include "engine/core/units.hpp"
#include "reports/plot_script.hpp"
#include "reports/table.hpp"
#include "storage/database.hpp"

namespace laconic::reports {

/// A report before its figures are drawn.
struct ReportDraft {
  Report report;
  std::vector<FigurePlot> plots;  ///< one per Figure in the report's sections, by name
  std::string metric;             ///< key of the test metric: "test_accuracy" or "test_perplexity"
  double target;                  ///< the time-to-target threshold used; NaN without finished runs
};

/// The comparison of `experiment`'s runs (docs/reports.md lists its sections). `target` is the
/// test-metric threshold of "time and bytes to target"; unset, it is derived from the runs.
/// ConfigError if the experiment has no runs (the message lists the experiments that exist).
/// With `links`, a section projects every configuration onto each of them.
ReportDraft build_report(storage::Database& db, const std::string& experiment,
                         std::optional<double> target = std::nullopt, const std::vector<LinkSpec>& links = {});

}  // namespace laconic::reports
