#include "reports/learning_curve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "reports/format.hpp"
#include "reports/stats.hpp"

namespace laconic::reports {
namespace {

constexpr int kBootstrapSamples = 400;
constexpr double kLowQuantile = 0.10, kHighQuantile = 0.90;  // an 80% interval

// What is left to learn at `value`: positive, shrinking as training goes well.
double left_to_learn(const TestMetric& metric, double value) { return metric.higher_is_better ? 1 - value : value; }

struct Line {
  double intercept = kNaN, slope = kNaN;
};

Line least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  if (sxx <= 0) return {};
  const double slope = sxy / sxx;
  return {my - slope * mx, slope};
}

// Steps at which the fitted line reaches log q = `level`; NaN for a line that does not descend.
double steps_at(const Line& line, double level) {
  if (!(line.slope < 0)) return kNaN;
  return std::exp((level - line.intercept) / line.slope);
}

}  // namespace

ExtrapolatedSteps extrapolate_steps(const std::vector<CurvePoint>& curve, const TestMetric& metric, double target,
                                    double horizon) {
  ExtrapolatedSteps out;
  std::vector<CurvePoint> usable;
  for (const CurvePoint& p : curve)
    if (p.step > 0 && !std::isnan(p.value) && left_to_learn(metric, p.value) > 0) usable.push_back(p);
  // The first third is the curve's start, which a power law fits worst; keep at least kMinCurvePoints.
  const std::size_t skip = std::min(usable.size() / 3, usable.size() - std::min(usable.size(), kMinCurvePoints));
  usable.erase(usable.begin(), usable.begin() + static_cast<std::ptrdiff_t>(skip));
  if (usable.size() > 8) usable.erase(usable.begin(), usable.end() - 8);
  out.points = usable.size();
  if (usable.size() < kMinCurvePoints) {
    out.why_not = str_cat(kMinCurvePoints, " evaluations past the curve's start are needed to fit it, its runs have ",
                          usable.size());
    return out;
  }
  std::vector<double> x, y;
  for (const CurvePoint& p : usable) {
    x.push_back(std::log(p.step));
    y.push_back(std::log(left_to_learn(metric, p.value)));
  }
  const Line fit = least_squares(x, y);
  out.exponent = -fit.slope;
  const double level = std::log(left_to_learn(metric, target));
  out.steps = steps_at(fit, level);
  if (std::isnan(out.steps)) {
    out.why_not = "its curve is not improving over its probe's later evaluations";
    return out;
  }
  if (out.steps > horizon) {
    // A curve that barely improves gives astronomical counts: 4.9e+62 reads, 63 digits do not.
    char about[32];
    std::snprintf(about, sizeof about, out.steps < 1e9 ? "%.0f" : "%.1e", out.steps);
    out.why_not = str_cat("its curve would reach the target after about ", about, " steps, more than ",
                          fixed(horizon, 0), " (10x its probe)");
    out.steps = kNaN;
    return out;
  }
  // Residual bootstrap: refit to the fitted line plus resampled residuals, each scaled by
  // sqrt(n / (n - 2)) since a fit of two parameters leaves residuals smaller than its errors.
  const double n = static_cast<double>(x.size());
  const double inflate = std::sqrt(n / (n - 2));
  std::vector<double> residuals;
  for (std::size_t i = 0; i < x.size(); ++i)
    residuals.push_back(inflate * (y[i] - (fit.intercept + fit.slope * x[i])));
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::size_t> pick(0, residuals.size() - 1);
  std::vector<double> draws;
  for (int b = 0; b < kBootstrapSamples; ++b) {
    std::vector<double> yb(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) yb[i] = fit.intercept + fit.slope * x[i] + residuals[pick(rng)];
    const double s = steps_at(least_squares(x, yb), level);
    draws.push_back(std::isnan(s) ? std::numeric_limits<double>::infinity() : s);
  }
  out.low = quantile_of(draws, kLowQuantile);
  out.high = quantile_of(draws, kHighQuantile);
  return out;
}

}  // namespace laconic::reports
