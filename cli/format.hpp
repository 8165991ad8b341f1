#pragma once
// Small formatting helpers for terminal output. Numbers shared with the reports (bytes,
// fixed-point) come from reports/format.hpp so that both say the same thing.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// 75.2 -> "1m15s"; under a minute "12.3s".
std::string human_seconds(double seconds);

/// A number for a person to read: 4 significant digits ("0.8512", "1.235e+05"); "nan", "inf",
/// "-inf". Exact values come from --format csv / json.
std::string significant(double value, int digits = 4);

/// A metric's value as every table of the CLI shows it: bytes (keys::is_byte_key) in decimal
/// units like `runs` ("4.65 MB"), anything else with significant().
std::string metric_text(const std::string& key, double value);

/// Unix seconds as local time, "2026-11-25 14:03:09"; "-" for NaN.
std::string local_time(double unix_seconds);

/// Renders rows as a left-aligned text table with a header line.
std::string text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

}  // namespace laconic::cli
