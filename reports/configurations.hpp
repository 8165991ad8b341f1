#pragma once
// Groups runs into configurations: runs whose swept variables agree except for the seed (and
// the repetition) are seeds of one configuration. A configuration sits in a grid whose rows are
// model x workers x every other swept variable that is not about the method, and whose columns
// are the method: the compressor x its swept fields, then the schedule and its swept fields
// where the file sweeps it ("none schedule=diloco inner_steps=50"). Derived from the runs'
// config and swept JSON.
#include <set>
#include <string>
#include <vector>

#include "reports/run_data.hpp"

namespace laconic::reports {

struct Configuration {
  std::string row;                   ///< "model=lenet5, workers=2, optimizer.lr=0.05"
  std::string column;                ///< "topk ratio=0.01"; "none"; "fp16 schedule=diloco inner_steps=50"
  std::string label;                 ///< short name for legends: the parts that differ between configurations
  std::vector<const RunData*> runs;  ///< its seeds and repetitions, in plan order
};

struct Grid {
  std::vector<std::string> rows;              ///< in order of first appearance
  std::vector<std::string> columns;           ///< in order of first appearance
  std::vector<Configuration> configurations;  ///< in order of first appearance

  /// The configuration in cell (row, column), or nullptr.
  const Configuration* find(const std::string& row, const std::string& column) const;
};

/// Groups `runs` (which must outlive the grid). Swept keys "seed" and "tune" and those in
/// `ignore` (hyperparameters a tuning chose per configuration) do not tell configurations apart.
Grid group_configurations(const std::vector<RunData>& runs, const std::set<std::string>& ignore = {});

/// The (row, column) of one run, as group_configurations() names them. With
/// `optimizer_is_method` (some run of the report has an optimizer that compresses,
/// ReportRun::optimizer_compresses) a swept optimizer is part of the method, the column, as a
/// swept schedule always is; otherwise it tells rows apart.
std::pair<std::string, std::string> cell_of(const ReportRun& run, const std::set<std::string>& ignore = {},
                                            bool optimizer_is_method = false);

}  // namespace laconic::reports
