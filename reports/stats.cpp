#include "reports/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/format.hpp"

namespace laconic::reports {
namespace {

std::vector<double> without_nan(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (!std::isnan(v)) out.push_back(v);
  return out;
}

std::string text_of(const Stats& stats, std::string (*format)(double, int), int digits) {
  if (stats.n == 0) return kMissing;
  if (stats.n == 1) return format(stats.mean, digits) + " (n=1)";
  return format(stats.mean, digits) + " ± " + format(stats.std, digits) + " (n=" + std::to_string(stats.n) + ")";
}

std::string significant(double value, int) { return seconds(value); }

}  // namespace

Stats stats_of(const std::vector<double>& values) {
  const auto v = without_nan(values);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (v.empty()) return {kNaN, kNaN, 0};
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  const double std = v.size() < 2 ? 0.0 : std::sqrt(squares / static_cast<double>(v.size() - 1));
  return {mean, std, v.size()};
}

double median_of(const std::vector<double>& values) {
  auto v = without_nan(values);
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

double quantile_of(const std::vector<double>& values, double q) {
  auto v = without_nan(values);
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, v.size() - 1);
  const double fraction = position - static_cast<double>(below);
  // No interpolation at an order statistic or between equal ones: infinite values stay infinite.
  if (fraction == 0 || v[above] == v[below]) return v[below];
  return v[below] + fraction * (v[above] - v[below]);
}

double student_t975(double df) {
  // t(0.975, df) for df = 1..30; beyond, the normal 1.96 is within 2%.
  static const double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                              2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                              2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  const auto whole = static_cast<std::size_t>(std::max(1.0, std::floor(df)));
  return whole <= 30 ? kT[whole - 1] : 1.96;
}

double ci95_half_width(const Stats& stats) {
  if (stats.n < 2) return std::numeric_limits<double>::quiet_NaN();
  return student_t975(static_cast<double>(stats.n - 1)) * stats.std / std::sqrt(static_cast<double>(stats.n));
}

WelchTerms welch_terms(const Stats& a, const Stats& b) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (a.n < 2 || b.n < 2) return {kNaN, kNaN};
  const double va = a.std * a.std / static_cast<double>(a.n), vb = b.std * b.std / static_cast<double>(b.n);
  const double se = std::sqrt(va + vb);
  if (se == 0) return {0, kNaN};
  // Welch-Satterthwaite degrees of freedom.
  const double df =
      (va + vb) * (va + vb) / (va * va / static_cast<double>(a.n - 1) + vb * vb / static_cast<double>(b.n - 1));
  return {se, df};
}

double welch_ci95_half_width(const Stats& a, const Stats& b) {
  const WelchTerms w = welch_terms(a, b);
  if (!(w.se > 0)) return w.se;  // NaN, or 0 for two spreads of 0
  return student_t975(w.df) * w.se;
}

std::string mean_ci_text(const Stats& stats) {
  if (stats.n == 0) return kMissing;
  if (stats.n == 1) return seconds(stats.mean) + " (n=1)";
  return seconds(stats.mean) + " ± " + seconds(ci95_half_width(stats)) + " (95%, n=" + std::to_string(stats.n) + ")";
}

std::string mean_std_text(const Stats& stats, int digits) { return text_of(stats, fixed, digits); }

std::string mean_std_significant(const Stats& stats) { return text_of(stats, significant, 0); }

}  // namespace laconic::reports
