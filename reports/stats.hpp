#pragma once
// Summary statistics over seeds, as the report tables print them.
#include <cstddef>
#include <string>
#include <vector>

namespace laconic::reports {

/// Mean, sample standard deviation (n - 1 in the denominator; 0 for one value) and count of the
/// non-NaN values. mean and std are NaN when there are none.
struct Stats {
  double mean;
  double std;
  std::size_t n;
};

/// Stats of the non-NaN `values`.
Stats stats_of(const std::vector<double>& values);

/// Median of the non-NaN values (mean of the middle two for an even count); NaN if none.
double median_of(const std::vector<double>& values);

/// "0.8125 ± 0.0177 (n=2)" with `digits` decimals, "0.8125 (n=1)" for one value, "-" for none.
std::string mean_std_text(const Stats& stats, int digits);

/// The same with three significant digits (seconds, bytes per step): "0.0123 ± 0.000412 (n=2)".
std::string mean_std_significant(const Stats& stats);

}  // namespace laconic::reports
