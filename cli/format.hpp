#pragma once
// Small formatting helpers for terminal tables.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// 1536 -> "1.5 KiB"; keeps three significant digits.
std::string human_bytes(double bytes);

/// 75.2 -> "1m15s"; under a minute "12.3s".
std::string human_seconds(double seconds);

/// A fixed-point number, or "-" for NaN.
std::string fixed(double value, int decimals);

/// Renders rows as a left-aligned text table with a header line.
std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows);

}  // namespace laconic::cli
