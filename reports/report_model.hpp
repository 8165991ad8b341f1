#pragma once
// Builds the document model of an experiment's comparison report from storage, with the gnuplot
// input of its figures (drawn later by write_report).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/hardware_profile.hpp"
#include "engine/core/units.hpp"
#include "reports/answer.hpp"
#include "reports/plot_script.hpp"
#include "reports/table.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::reports {

/// A report before its figures are drawn.
struct ReportDraft {
  Report report;
  std::vector<FigurePlot> plots;  ///< one per Figure in the report's sections, by name
  std::string metric;             ///< key of the test metric: "test_accuracy" or "test_perplexity"
  double target;                  ///< the first row's target; NaN without finished runs
  /// One line per row: "test_accuracy >= 0.8472 (none reached 0.8522 on average, less 0.5 points)",
  /// prefixed with the row when there are several.
  std::vector<std::string> targets;
};

/// The numbers every section reads, for the runs of some experiments, in one place: the summaries
/// point into the grid, the grid into the runs, the answer into both.
struct ExperimentModel {
  ExperimentRuns runs;
  std::string metric_key;  ///< "test_accuracy" or "test_perplexity"
  TestMetric metric;
  std::vector<RunData> compared;    ///< the FINISHED runs compared (a tuned experiment's tune=best ones)
  std::vector<RunData> trial_data;  ///< a tuned experiment's trials
  std::vector<std::string> tuned_keys;
  bool tuned = false;
  Grid grid;
  std::vector<ConfigSummary> summaries;  ///< one per grid configuration
  std::unique_ptr<Answer> answer;
};

/// The model of `experiments`' runs (one, or several side by side); ConfigError as for
/// build_report. What build_report writes sections of, and what `laconic ui` draws.
std::unique_ptr<ExperimentModel> build_model(storage::Database& db, const std::vector<std::string>& experiments,
                                             const TargetRule& rule = {});

/// One run's compute utilization (compute_utilization() of it alone): what `laconic runs`
/// shows, the same number as the report's step-time table for a configuration of that one run.
double run_compute_utilization(storage::Database& db, const storage::RunRow& run);

/// The hardware profile the runs resolved (the experiment field `hardware = profile { ... }` or
/// `by_hand { ... }`), as the run fact `resolved` holds it, so no file need still be there; for
/// runs recorded before that fact, read from the files they name. Unset when they name none
/// (measured()). ConfigError when such an older run's file is gone or malformed.
std::optional<HardwareProfile> experiment_hardware(const ExperimentModel& model);

/// A section another folder adds to a report right after the answer (advise/: "Advice"), from the
/// experiment's model and the hardware profile the report projects onto (may be null); nothing
/// when it has nothing to say. The reports draw it as every other section and never include the
/// folder that builds it.
using SectionProvider = std::function<std::optional<Section>(const ExperimentModel&, const HardwareProfile*)>;

/// The comparison of the runs of `experiments` (one, or several side by side: their runs are
/// kept apart in the rows as experiment=NAME; docs/reports.md lists the sections). `rule` says
/// how each row's target of "time to target" is chosen. ConfigError if an experiment has no
/// runs (the message lists the experiments that exist). With `links`, the answer and a section
/// project every configuration onto each of them. With `hardware` (else the profile the runs
/// name, experiment_hardware()), the answer and a section also project every configuration onto it.
/// `added`: the sections other folders add after the answer, in order.
ReportDraft build_report(storage::Database& db, const std::vector<std::string>& experiments,
                         const TargetRule& rule = {}, const std::vector<LinkSpec>& links = {},
                         const HardwareProfile* hardware = nullptr, const std::vector<SectionProvider>& added = {});

/// The report of a model built for `experiments` (build_model).
ReportDraft report_of(const ExperimentModel& model, const std::vector<std::string>& experiments,
                      const std::vector<LinkSpec>& links = {}, const HardwareProfile* hardware = nullptr,
                      const std::vector<SectionProvider>& added = {});

}  // namespace laconic::reports
