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

/// The q-quantile (0 <= q <= 1) of the non-NaN values, interpolating linearly between order
/// statistics (quantile_of(v, 0.5) == median_of(v)); NaN if none.
double quantile_of(const std::vector<double>& values, double q);

/// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1; 1.96 beyond 30, within
/// 2%); a fractional df (Welch's) is rounded down, which widens the interval a little.
double student_t975(double df);

/// Half the width of the 95% confidence interval of the mean: t(0.975, n - 1) x std / sqrt(n),
/// Student's t for the few seeds a sweep has; NaN for fewer than two values.
double ci95_half_width(const Stats& stats);

/// Welch's standard error of the difference of two means and its Welch-Satterthwaite degrees
/// of freedom; NaN both when either side has fewer than two values, df NaN when se is 0.
struct WelchTerms {
  double se;
  double df;
};
WelchTerms welch_terms(const Stats& a, const Stats& b);

/// Half the width of the 95% confidence interval of the difference of two means, Welch's: no
/// assumption that the two spreads are equal; NaN when either side has fewer than two values.
double welch_ci95_half_width(const Stats& a, const Stats& b);

/// "0.0123 ± 0.000412 (95%, n=3)" with three significant digits, "0.0123 (n=1)", "-" for none.
std::string mean_ci_text(const Stats& stats);

/// "0.8125 ± 0.0177 (n=2)" with `digits` decimals, "0.8125 (n=1)" for one value, "-" for none.
std::string mean_std_text(const Stats& stats, int digits);

/// The same with three significant digits (seconds, bytes per step): "0.0123 ± 0.000412 (n=2)".
std::string mean_std_significant(const Stats& stats);

}  // namespace laconic::reports
