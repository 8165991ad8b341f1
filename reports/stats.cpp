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

std::string mean_std_text(const Stats& stats, int digits) { return text_of(stats, fixed, digits); }

std::string mean_std_significant(const Stats& stats) { return text_of(stats, significant, 0); }

}  // namespace laconic::reports
