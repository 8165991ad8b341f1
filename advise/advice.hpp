#pragma once
// What `laconic advise` says (docs/advise.md), computed once from an experiment's model
// (reports/report_model.hpp) and its answer (reports/answer.hpp): each candidate configuration's
// predicted step and time to the target on the link asked about, the candidates ranked by that
// time with their intervals, each one's break-even bandwidth against the baseline, those dropped
// with the reason, and whether the first two can be told apart. The CLI prints its table; the
// numbers are the answer's on the link with the row's shared compute (AnswerLink::shared_compute:
// forward, backward and optimizer are the same work for every candidate, so the host's noise in
// them is taken out of the ranking), where the report's "Projected onto other links" and "Does it
// pay off?" take each configuration's own.
#include <optional>
#include <string>
#include <vector>

#include "advise/layer_plan.hpp"
#include "engine/core/units.hpp"
#include "reports/answer.hpp"
#include "reports/curve_time.hpp"
#include "reports/hardware_step.hpp"
#include "reports/report_model.hpp"
#include "reports/sections.hpp"
#include "reports/table.hpp"

namespace laconic::advise {

// The report's model, answer and tables, which the advisor reads and builds on.
using reports::BandwidthScan;
using reports::Comparison;
using reports::ConfigSummary;
using reports::ExperimentModel;
using reports::kNaN;
using reports::Section;
using reports::Table;
using reports::TestMetric;
using reports::TimeToTarget;

/// Where a candidate's steps to the target come from.
enum class StepsBasis {
  Probe,  ///< its probes reached the target: the steps they took (the answer's; 95% interval over seeds)
  Curve,  ///< they did not: extrapolated from their learning curve (reports/learning_curve.hpp; 80%)
};

/// One candidate on the link.
struct AdviceRow {
  const ConfigSummary* summary = nullptr;
  std::string candidate;  ///< the configuration's label ("topk error_feedback=true ratio=0.01")
  bool baseline = false;  ///< the configuration every other is judged against
  /// s per step and worker on the link (Answer::step): compute the mean over every probe of the
  /// row (AnswerLink::shared_compute: the same work for each candidate), compress and wait as its
  /// probes measured them, their messages projected onto the link; with a hardware profile, the
  /// step projected onto it (hardware_step: its compute and codec costs, the link's communication).
  double step = kNaN;
  TimeToTarget time;   ///< to the target, on the link, within the probes (the answer's)
  Comparison versus;   ///< against the baseline on the link, within the probes (the answer's)
  BandwidthScan scan;  ///< the answer's scan from 10 Mbit/s to 100 Gbit/s at the link's latency
  StepsBasis basis = StepsBasis::Probe;
  /// The prediction: steps to the target, and seconds to it on the link (steps x step) with
  /// its interval (95% over seeds for Probe, 80% of the fit for Curve; NaN where there is none).
  double steps = kNaN, seconds = kNaN, low = kNaN, high = kNaN;
  /// The top of the run of scanned bandwidths, from the slowest up, at which its predicted time
  /// is below the baseline's (point estimates, the baseline's prediction alike: `seconds` scaled
  /// by its step there, so that at the link's own rate the comparison is the ranking's); NaN if
  /// it is not faster at the slowest, or for the baseline.
  double crossover = kNaN;
  double final_metric = kNaN;  ///< mean over seeds at the probe's end
  /// Why it is not ranked ("did not reach the target within its probe (0 of 1 runs)"); "" when it is.
  std::string dropped;
};

struct Advice {
  LinkSpec link;
  const HardwareProfile* hardware = nullptr;  ///< the steps projected onto it; null: as probed here
  TestMetric metric;
  double target = kNaN;            ///< the (first) row's target value
  std::string target_source;       ///< "none reached 0.8522 on average, less 0.5 points", "--target"
  std::vector<AdviceRow> ranked;   ///< fastest predicted time to target first
  std::vector<AdviceRow> dropped;  ///< in the experiment's order
  /// Whether the first two can be told apart, and what would do it; "" with fewer than two ranked.
  std::string first_two;
  /// Where the answer found the ranked candidates' probes disturbed (Verdict::noise: compute
  /// unlike the baseline's, which no compressor changes; a host busier than its cores), a
  /// sentence saying so, that the steps take the mean compute instead, and that more seeds
  /// average the rest; "" otherwise, and with a hardware profile (whose compute is the profile's).
  std::string probe_noise;
  /// Where the link has no cost per message on the hosts (its overhead is 0), a sentence saying
  /// that its messages are projected onto the wire alone and how to give the hosts' cost; ""
  /// where the link has one.
  std::string host_costs;
};

/// Which layers of a ranked candidate to leave dense on the advice's link (reports/layer_plan.hpp).
struct AdviceLayers {
  const ConfigSummary* summary = nullptr;  ///< the candidate's probes
  std::string candidate;
  LayerPlan plan;
  std::string codec_costs;  ///< where its codec seconds come from: "this host", or the hardware profile's name
};

/// Each ranked candidate whose runs carry their measured layer costs (the fact `layer_costs`),
/// in rank order, planned at its runs' workers on the advice's link, with the messages its probes
/// sent (and, for the split that leaves every layer dense, those of the probes of `none`); with a
/// hardware profile, its codec seconds the profile's (costs_on_hardware), and a candidate the
/// profile does not cost left out.
std::vector<AdviceLayers> advice_layers(const Advice& advice);

/// One line per candidate of advice_layers: "- CANDIDATE: " and its layer_plan_summary.
std::string advice_layers_text(const std::vector<AdviceLayers>& layers);

/// The advice for the model's configurations on `link`, with their steps as probed here or, with
/// `hardware`, projected onto that profile (which must outlive the advice).
Advice advice_of(const ExperimentModel& model, const LinkSpec& link, const HardwareProfile* hardware = nullptr);

/// Section "Advice" of an experiment whose runs `laconic advise` ranked (their fact `advice`), on
/// the link it was asked about: advice_table and what it says; nothing for other experiments.
/// What `laconic report` and the UI's experiment page show, as `laconic advise` printed it.
std::optional<Section> advice_section(const ExperimentModel& model, const HardwareProfile* hardware = nullptr);

/// "Dropped: qsgd levels=16: not reached within its probe (0 of 1 runs), and ...; ...": why each
/// dropped candidate is not ranked (below the table, which says only "dropped"); "" for none.
std::string dropped_text(const Advice& advice);

/// The ranked candidates, then the dropped ones: rank, candidate, step, steps and time to target
/// (with its interval and where it comes from), against the baseline, the bandwidth below which
/// it beats the baseline, final metric; its CSV has the raw numbers (seconds, bits per second).
Table advice_table(const Advice& advice);

}  // namespace laconic::advise
