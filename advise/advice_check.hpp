#pragma once
// `laconic advise --check FULL` (docs/advise.md, "Checking a prediction"): the advice given from
// the probes set against full runs of the same candidates (the experiment FULL, e.g. trained as
// processes on an emulated link): each candidate's predicted step and time to the target beside
// the measured ones, both ranks, and the regret of following the advice.
#include <optional>
#include <string>
#include <vector>

#include "advise/advice.hpp"

namespace laconic::advise {

// The report's model, answer and tables, which the advisor reads and builds on.
using reports::ExperimentModel;
using reports::kNaN;
using reports::Table;

struct CheckRow {
  std::string candidate;           ///< the configuration's column ("topk error_feedback=true ratio=0.01")
  std::size_t predicted_rank = 0;  ///< 0: dropped by the advice
  std::size_t measured_rank = 0;   ///< 0: its full runs did not reach the target
  /// s per step; measured: measured_step(), the step as the full runs ran it (the report's).
  double predicted_step = kNaN, measured_step = kNaN;
  /// Predicted: the advice's. Measured: computed as the advice computes its times, from the full
  /// runs: each one's steps to the target x its step as it ran, the geometric mean over those that
  /// reached it (Answer::time_to_target on Answer::measured_link()).
  double predicted_time = kNaN, measured_time = kNaN;
  /// The advice's interval of the predicted time (95% over seeds, or 80% of the curve's fit; NaN
  /// where it gave none).
  double predicted_low = kNaN, predicted_high = kNaN;
  /// Whether the measured time lies within that interval; unset where either is missing.
  std::optional<bool> within;
};

struct AdviceCheck {
  std::vector<CheckRow> rows;       ///< in the advice's order, then the dropped
  double median_step_error = kNaN;  ///< median over candidates of |predicted / measured step - 1|
  /// The measured time of the advice's first choice over the best measured time, less 1
  /// (0: it was the best); and the same for the baseline ("never compress").
  double regret = kNaN, baseline_regret = kNaN;
  std::string best;   ///< the candidate measured fastest to the target
  std::string first;  ///< the advice's first choice
  /// Of the rows with both an interval and a measured time, how many measured within it: how
  /// far the advice's stated uncertainty held.
  std::size_t within = 0, with_interval = 0;
};

/// `advised`: the probes' model; `full`: the full runs' model, built with the advice's target.
AdviceCheck check_advice(const Advice& advice, const ExperimentModel& full);

/// candidate, predicted and measured rank, step, its error, time to target, its error, the
/// advice's interval and whether the measured time lies within it.
Table check_table(const AdviceCheck& check);

}  // namespace laconic::advise
