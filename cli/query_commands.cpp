#include "cli/query_commands.hpp"

#include <iostream>

#include "cli/format.hpp"
#include "reports/format.hpp"
#include "reports/report.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::cli {

int runs_command(const std::string& db_path, const std::optional<std::string>& experiment,
                 const std::optional<std::string>& status) {
  auto db = storage::Database::open_read_only(db_path);
  storage::RunFilter filter{experiment, status};
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : storage::list_runs(*db, filter))
    rows.push_back({std::to_string(run.id), run.experiment, run.name, run.status_label(),
                    reports::fixed(run.final_test_accuracy, 4), reports::human_bytes(run.bytes_sent),
                    human_seconds(run.wall_time)});
  if (rows.empty()) {
    std::cout << "no runs in " << db_path << "\n";
    return 0;
  }
  std::cout << text_table({"id", "experiment", "run", "status", "test_acc", "bytes_sent", "wall"},
                          rows);
  return 0;
}

int report_command(const std::string& db_path, const std::string& experiment,
                   const std::string& out) {
  auto db = storage::Database::open_read_only(db_path);
  const std::string dir = out.empty() ? "laconic-reports/" + experiment : out;
  auto paths = reports::write_report(*db, experiment, dir);
  std::cout << "report: " << paths.html << "\n"
            << "        " << paths.markdown << "\n";
  return 0;
}

}  // namespace laconic::cli
