#pragma once
// The sections of an experiment's report, each built from the configurations' numbers. A section
// that has figures appends their gnuplot input to `plots`; figure files are drawn later, all at
// once (reports/gnuplot.hpp).
#include <optional>
#include <vector>

#include "engine/core/units.hpp"
#include "reports/aggregate.hpp"
#include "reports/answer.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/plot_script.hpp"
#include "reports/table.hpp"

namespace laconic::reports {

/// What every section builder reads.
struct SectionInput {
  const Grid& grid;
  const std::vector<ConfigSummary>& summaries;  ///< one per grid configuration, same order
  const TestMetric& metric;
  const Answer& answer;  ///< targets, times to target and verdicts of the same summaries
  /// laconic report --hardware: the profile steps are also projected onto; null without one.
  const HardwareProfile* hardware = nullptr;
};

/// 0. The answer: per row, the target, the fastest configuration to it on the runs' link and on
/// each of `links`, what it costs in accuracy, and what lies within the noise; a table of every
/// configuration's verdict (reports/answer.hpp).
Section summary_section(const SectionInput& in, const std::vector<LinkSpec>& links);

/// 1. Final test metric: rows x columns of the grid, mean ± sample std over seeds.
Section final_metric_section(const SectionInput& in);

/// 2. Test metric against the achieved compression ratio (figure "metric_vs_compression").
Section compression_section(const SectionInput& in, std::vector<FigurePlot>& plots);

/// 3. Seconds per step as compute / compress / communicate, measured and projected (figure
/// "step_time").
Section step_time_section(const SectionInput& in, std::vector<FigurePlot>& plots);

/// 3b. Seconds per step projected onto each of `links` (laconic report --link) from the
/// messages the runs recorded, against the same row's dense configuration.
Section other_links_section(const SectionInput& in, const std::vector<LinkSpec>& links);

/// 3c. On other hardware (laconic report --hardware): every configuration's step projected onto
/// the profile's hardware next to the one measured here, and its time to target and break-even
/// bandwidth there against here, with why they moved (reports/hardware_step.hpp).
Section hardware_section(const SectionInput& in, const std::vector<LinkSpec>& links);

/// 3c'. Bytes per link kind: runs on islands, their messages and bytes inside islands and between
/// them (reports/link_kinds.cpp); nothing when no run was on islands.
std::optional<Section> link_kinds_section(const SectionInput& in);

/// 3d. Which rank is slow: per run, the rank the others waited for most and each phase's slowest
/// rank (reports/slow_rank.hpp); nothing when no run had a rank waited for.
std::optional<Section> slow_rank_section(const SectionInput& in);

/// 3e. Workers that leave and join: per run with churn, its changes, the state handed to the
/// joiners (measured, and projected onto the run's link) and its test metric against its calm
/// twin's (reports/churn.hpp); nothing when no run had churn.
std::optional<Section> churn_section(const SectionInput& in);

/// 4. Test metric per epoch and against cumulative measured and projected time (figures
/// "convergence_epoch" and "convergence_time").
Section convergence_section(const SectionInput& in, std::vector<FigurePlot>& plots);

/// 5. Time and bytes until the test metric first reaches its row's target.
Section target_section(const SectionInput& in);

/// 5b. Does it pay off? Time to the row's target projected over bandwidths from 10 Mbit/s to
/// 100 Gbit/s (figure "pays_off"), and each compressed configuration's verdict against its row's
/// fastest dense configuration there. Only for runs that recorded messages and link_bytes.
Section pays_off_section(const SectionInput& in, std::vector<FigurePlot>& plots);

/// 6. Bits per parameter per epoch of the compressed configurations (figure "bits_per_parameter").
Section bits_section(const SectionInput& in, std::vector<FigurePlot>& plots);

/// Tuned experiments: per configuration the chosen trial, the median trial and the best
/// trial's mean over all seeds. `trials` and `best` are the runs with tune=trial and tune=best.
Section tuning_section(const std::vector<RunData>& trials, const std::vector<RunData>& best,
                       const std::vector<std::string>& tuned_keys, const TestMetric& metric);

/// The swept keys a tuning drew (hyperparameters such as "optimizer.lr"), inferred from the
/// trials and best runs; empty when they cannot be told apart (docs/reports.md).
std::vector<std::string> infer_tuned_keys(const std::vector<RunData>& trials, const std::vector<RunData>& best);

/// Every run name's latest run with its status, whatever the status.
Section runs_section(const ExperimentRuns& runs, const TestMetric& metric);

}  // namespace laconic::reports
