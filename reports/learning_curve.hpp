#pragma once
// Steps to a target extrapolated from a short probe's learning curve (laconic advise;
// docs/advise.md, "How it predicts"). What is left to learn, q = 1 - accuracy for a metric where
// higher is better (a fraction) or the metric itself where lower is better (a loss, a
// perplexity), is fitted as a power law of the steps taken, log q = a - c log step, by least
// squares over the probe's evaluations but its first third; the steps at which q reaches the target's follow,
// with an 80% interval from a residual bootstrap of that fit (residuals inflated by
// sqrt(n / (n - 2)); seeded, so the same evaluations give the same interval). On power-law curves
// with 5% noise it covers the true steps 77% of the time (tests/reports/learning_curve_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "reports/aggregate.hpp"

namespace laconic::reports {

struct CurvePoint {
  double step = 0;
  double value = kNaN;  ///< the metric there
};

struct ExtrapolatedSteps {
  double steps = kNaN;           ///< predicted steps to the target
  double low = kNaN, high = kNaN;  ///< its 80% interval
  double exponent = kNaN;        ///< c: how fast what is left to learn shrinks
  std::size_t points = 0;        ///< evaluations fitted
  /// Why there is no prediction ("3 evaluations are needed to fit a curve, it has 1"); "" when
  /// there is one.
  std::string why_not;
};

/// Evaluations used: those after step 0 less the first third of them (the curve's start), at
/// least 3 where there are, at most the last 8.
inline constexpr std::size_t kMinCurvePoints = 3;

/// The fit and its extrapolation to `target` for `metric`'s direction. No prediction when fewer
/// than kMinCurvePoints evaluations, when the curve is not improving (c <= 0), or when the
/// predicted steps exceed `horizon` (then why_not says how many it would need).
ExtrapolatedSteps extrapolate_steps(const std::vector<CurvePoint>& curve, const TestMetric& metric, double target,
                                    double horizon);

}  // namespace laconic::reports
