#include "reports/configurations.hpp"

#include <algorithm>
#include <map>

#include "engine/core/run_config.hpp"

namespace laconic::reports {
namespace {

bool about_compressor(const std::string& key) { return key == "compressor" || key.starts_with("compressor."); }

// A swept schedule is part of the method, as the compressor is: local SGD and DiLoCo are ways of
// communicating less, compared with the others in one row.
bool about_schedule(const std::string& key) { return key == "schedule" || key.starts_with("schedule."); }

// So is a swept optimizer where one of them compresses (DeMo): DDP with AdamW and DeMo are two
// ways of exchanging the same training, one row.
bool about_optimizer(const std::string& key) { return key == "optimizer" || key.starts_with("optimizer."); }

void append(std::string& text, const std::string& part) { text += (text.empty() ? "" : ", ") + part; }

// The "key=value" parts of a row, as append() joined them.
std::vector<std::string> row_parts(const std::string& row) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0; begin <= row.size();) {
    const std::size_t end = std::min(row.find(", ", begin), row.size());
    parts.push_back(row.substr(begin, end - begin));
    begin = end + 2;
  }
  return parts;
}

// The parts every row has (workers=2 when no row differs in it).
std::set<std::string> parts_in_every_row(const std::vector<std::string>& rows) {
  std::map<std::string, std::size_t> seen;
  for (const std::string& row : rows) {
    const std::vector<std::string> parts = row_parts(row);
    for (const std::string& part : std::set<std::string>(parts.begin(), parts.end())) ++seen[part];
  }
  std::set<std::string> common;
  for (const auto& [part, times] : seen)
    if (times == rows.size()) common.insert(part);
  return common;
}

}  // namespace

std::pair<std::string, std::string> cell_of(const ReportRun& run, const std::set<std::string>& ignore,
                                            bool optimizer_is_method) {
  std::string row, column = run.compressor.empty() ? "?" : run.compressor;
  if (!run.experiment_part.empty()) append(row, run.experiment_part);
  append(row, "model=" + (run.model.empty() ? std::string("?") : run.model));
  append(row, "workers=" + std::to_string(run.workers));
  std::string fields, schedule, optimizer;
  for (const auto& [key, value] : run.swept.items()) {
    if (key == kSeedVariable || key == "tune" || key == "model" || key == "workers" || key == "compressor" ||
        ignore.count(key))
      continue;
    if (about_compressor(key))
      fields += " " + key.substr(std::string("compressor.").size()) + "=" + value_text(value);
    else if (about_schedule(key))
      schedule += " " + (key == "schedule" ? key : key.substr(std::string("schedule.").size())) + "=" + value_text(value);
    else if (optimizer_is_method && about_optimizer(key))
      optimizer += " " + (key == "optimizer" ? key : key.substr(std::string("optimizer.").size())) + "=" + value_text(value);
    else
      append(row, key + "=" + value_text(value));
  }
  return {row, column + fields + optimizer + schedule};
}

const Configuration* Grid::find(const std::string& row, const std::string& column) const {
  for (const auto& c : configurations)
    if (c.row == row && c.column == column) return &c;
  return nullptr;
}

Grid group_configurations(const std::vector<RunData>& runs, const std::set<std::string>& ignore) {
  Grid grid;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  const bool optimizer_is_method =
      std::any_of(runs.begin(), runs.end(), [](const RunData& data) { return data.run.optimizer_compresses; });
  for (const auto& data : runs) {
    const auto cell = cell_of(data.run, ignore, optimizer_is_method);
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
  // one column, both otherwise; and of a row only the parts some other row lacks.
  const std::set<std::string> common = parts_in_every_row(grid.rows);
  for (auto& c : grid.configurations) {
    std::string row;
    for (const std::string& part : row_parts(c.row))
      if (!common.count(part)) append(row, part);
    if (row.empty()) row = c.row;  // a row whose every part the others share too
    if (grid.rows.size() == 1)
      c.label = c.column;
    else if (grid.columns.size() == 1)
      c.label = row;
    else
      c.label = row + " / " + c.column;
  }
  return grid;
}

}  // namespace laconic::reports
