#include "cli/merge_command.hpp"

#include <iostream>

#include "storage/merge.hpp"

namespace laconic::cli {

int merge_command(const std::string& target, const std::vector<std::string>& sources) {
  auto db = storage::Database::open(target);
  for (const std::string& source : sources) {
    const storage::MergeReport r = storage::merge_database(*db, source);
    std::cout << source << ": " << r.runs_added << " runs added (" << r.metric_rows_added << " metric rows), "
              << r.experiments_added << " experiments added, " << r.duplicates.size() << " already there, "
              << r.conflicts.size() << " kept beside a run of the same name, " << r.skipped.size() << " not ended\n";
    for (const auto& line : r.duplicates) std::cout << "  already there: " << line << "\n";
    for (const auto& line : r.conflicts) std::cout << "  both kept: " << line << "\n";
    for (const auto& line : r.skipped) std::cout << "  not added: " << line << "\n";
  }
  std::cout << "merged into " << target << "\n";
  return 0;
}

}  // namespace laconic::cli
