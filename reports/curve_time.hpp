#pragma once
// The answer's view of a configuration that ran out of steps before its target: its steps to the
// target extrapolated from its learning curve (reports/learning_curve.hpp), times its step on a
// link. One computation for the report's answer and laconic advise's ranking (advise/advice.hpp).
#include <string>

#include "reports/answer.hpp"

namespace laconic::reports {

/// A configuration that did not reach the target within its runs: its steps to it extrapolated
/// from its learning curve, times its step on a link (one computation for laconic advise's
/// ranking and the report's answer).
struct CurveTime {
  double steps = kNaN, seconds = kNaN, low = kNaN, high = kNaN;  ///< 80% interval of the fit
  std::string why_not;  ///< why there is none (too few evaluations, not improving, too far)
};

/// The extrapolation of `s`'s mean curve to its row's target (at most 10x the steps its runs
/// took), each step `step` seconds.
CurveTime curve_time(const Answer& answer, const ConfigSummary& s, double step);

/// "extrapolated from its learning curve: 3.2 s [2.1, 5.0] (80% of the fit)", or why there is
/// no extrapolation.
std::string curve_time_text(const CurveTime& t);

}  // namespace laconic::reports
