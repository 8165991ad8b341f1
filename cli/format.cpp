#include "cli/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "engine/core/metric_keys.hpp"
#include "reports/format.hpp"

namespace laconic::cli {

std::string local_time(double unix_seconds) {
  if (std::isnan(unix_seconds)) return "-";
  const auto seconds = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string metric_text(const std::string& key, double value) {
  if (keys::is_byte_key(key) && std::isfinite(value)) return reports::human_bytes(value);
  return reports::significant_digits(value);
}

std::string text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < width.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      out += cell;
      if (c + 1 < width.size()) out += std::string(width[c] - cell.size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

}  // namespace laconic::cli
