#pragma once
// Small formatting helpers for terminal output. Numbers shared with the reports and the controller
// (bytes, fixed-point, durations, significant digits) come from reports/format.hpp so that all say
// the same thing.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// A metric's value as every table of the CLI shows it: bytes (keys::is_byte_key) in decimal
/// units like `runs` ("4.65 MB"), anything else with reports::significant_digits().
std::string metric_text(const std::string& key, double value);

/// Unix seconds as local time, "2026-11-25 14:03:09"; "-" for NaN.
std::string local_time(double unix_seconds);

/// Renders rows as a left-aligned text table with a header line.
std::string text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace laconic::cli
