#include "reports/curve_time.hpp"

#include <cmath>

#include "reports/format.hpp"
#include "reports/learning_curve.hpp"

namespace laconic::reports {
namespace {

std::vector<CurvePoint> curve_of(const ConfigSummary& s) {
  std::vector<CurvePoint> curve;
  for (const EvalSummary& e : s.evaluations) curve.push_back({static_cast<double>(e.step), e.metric.mean});
  return curve;
}

}  // namespace

CurveTime curve_time(const Answer& answer, const ConfigSummary& s, double step) {
  const double probe = s.evaluations.empty() ? 0 : static_cast<double>(s.evaluations.back().step);
  const ExtrapolatedSteps e = extrapolate_steps(curve_of(s), answer.metric(), answer.target_of(s).value, 10 * probe);
  if (!e.why_not.empty()) return {.why_not = e.why_not};
  return {e.steps, e.steps * step, e.low * step, e.high * step, ""};
}

std::string curve_time_text(const CurveTime& t) {
  if (!t.why_not.empty()) return "no extrapolation: " + t.why_not;
  if (std::isnan(t.seconds)) return "no extrapolation: no step on the link";
  return str_cat("extrapolated from its learning curve: ", seconds(t.seconds), " s [", seconds(t.low), ", ",
                 seconds(t.high), "] (80% of the fit)");
}

}  // namespace laconic::reports
