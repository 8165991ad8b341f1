#pragma once
// A report's CSV tables read back in tests: cells by row, a value by row label and column name.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace laconic::reports::testing {

/// The CSV lines of `text` as cells; a quoted cell may hold commas.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        cells.emplace_back();
      else
        cells.back() += c;
    }
    rows.push_back(cells);
  }
  return rows;
}

/// The value in column `column` of the row whose first cell is `label`; NaN for an empty cell.
inline double csv_value(const std::vector<std::vector<std::string>>& rows, const std::string& label,
                 const std::string& column) {
  const auto& header = rows.at(0);
  const auto at = std::find(header.begin(), header.end(), column);
  REQUIRE(at != header.end());
  for (const auto& row : rows)
    if (row.at(0) == label) {
      const std::string& cell = row.at(static_cast<std::size_t>(at - header.begin()));
      return cell.empty() ? std::nan("") : std::stod(cell);
    }
  FAIL("no row " << label);
  return 0;
}

}  // namespace laconic::reports::testing
