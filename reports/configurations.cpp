#include "reports/configurations.hpp"

#include <algorithm>
#include <map>

namespace laconic::reports {
namespace {

bool about_compressor(const std::string& key) { return key == "compressor" || key.starts_with("compressor."); }

void append(std::string& text, const std::string& part) { text += (text.empty() ? "" : ", ") + part; }

}  // namespace

std::pair<std::string, std::string> cell_of(const ReportRun& run, const std::set<std::string>& ignore) {
  std::string row, column = run.compressor.empty() ? "?" : run.compressor;
  append(row, "model=" + (run.model.empty() ? std::string("?") : run.model));
  append(row, "workers=" + std::to_string(run.workers));
  std::string fields;
  for (const auto& [key, value] : run.swept.items()) {
    if (key == "seed" || key == "tune" || key == "model" || key == "workers" || key == "compressor" ||
        ignore.count(key))
      continue;
    if (about_compressor(key))
      fields += " " + key.substr(std::string("compressor.").size()) + "=" + value_text(value);
    else
      append(row, key + "=" + value_text(value));
  }
  return {row, column + fields};
}

const Configuration* Grid::find(const std::string& row, const std::string& column) const {
  for (const auto& c : configurations)
    if (c.row == row && c.column == column) return &c;
  return nullptr;
}

Grid group_configurations(const std::vector<RunData>& runs, const std::set<std::string>& ignore) {
  Grid grid;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const auto& data : runs) {
    const auto cell = cell_of(data.run, ignore);
    auto [it, added] = index.emplace(cell, grid.configurations.size());
    if (added) {
      grid.configurations.push_back({cell.first, cell.second, "", {}});
      if (std::find(grid.rows.begin(), grid.rows.end(), cell.first) == grid.rows.end()) grid.rows.push_back(cell.first);
      if (std::find(grid.columns.begin(), grid.columns.end(), cell.second) == grid.columns.end())
        grid.columns.push_back(cell.second);
    }
    grid.configurations[it->second].runs.push_back(&data);
  }
  // Legends name only what differs: the column when there is one row, the row when there is
  // one column, both otherwise.
  for (auto& c : grid.configurations) {
    if (grid.rows.size() == 1)
      c.label = c.column;
    else if (grid.columns.size() == 1)
      c.label = c.row;
    else
      c.label = c.row + " / " + c.column;
  }
  return grid;
}

}  // namespace laconic::reports
