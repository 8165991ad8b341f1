#pragma once
// Number formatting shared by the report tables. Every function prints "-" for NaN (no value).
#include <string>

namespace laconic::reports {

/// The cell text for a missing value.
inline constexpr const char* kMissing = "-";

/// Fixed-point with `digits` decimals: fixed(0.78125, 4) == "0.7813".
std::string fixed(double value, int digits);

/// Decimal (SI) units of bytes with three significant digits: "812 B", "1.50 kB", "12.3 MB",
/// "2.05 GB". Bytes are counted, so 1 MB = 10^6 bytes.
std::string human_bytes(double bytes);

/// A ratio such as dense / sent bytes: "25.0x"; "-" when the denominator is 0.
std::string ratio(double numerator, double denominator);
/// A ratio already divided (RunRow::compression_ratio): "25.0x"; "-" when it is NaN.
std::string ratio_text(double value);

/// How far a prediction is from what was measured: "+12%", "-7%" (predicted / measured - 1);
/// "-" when either is missing or the measured is not positive.
std::string relative_error(double predicted, double measured);

/// A fraction as a whole percentage: 0.834 -> "83%"; "-" for NaN.
std::string percent(double fraction);

/// Seconds with three significant digits: "0.00123", "1.5", "12.3".
std::string seconds(double value);

/// A value for a CSV file or a gnuplot data file: up to 10 significant digits ("0.01",
/// "2500000"); "" for NaN in CSV, "inf" / "-inf" for infinities.
std::string raw_number(double value);

/// A duration for a person: 75.2 -> "1m15s"; under a minute "12.3s"; "-" for NaN.
std::string human_seconds(double seconds);

/// A number for a person to read: 4 significant digits ("0.8512", "1.235e+05"); "nan", "inf",
/// "-inf". Exact values come from --format csv / json.
std::string significant_digits(double value, int digits = 4);

}  // namespace laconic::reports
