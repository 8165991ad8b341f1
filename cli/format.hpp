#pragma once
// Small formatting helpers for terminal output. Numbers shared with the reports (bytes,
// fixed-point) come from reports/format.hpp so that both say the same thing.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// 75.2 -> "1m15s"; under a minute "12.3s".
std::string human_seconds(double seconds);

/// Renders rows as a left-aligned text table with a header line.
std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows);

}  // namespace laconic::cli
