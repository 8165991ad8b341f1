#include "cli/query_commands.hpp"

#include <iostream>

#include "reports/report.hpp"
#include "storage/database.hpp"

namespace laconic::cli {

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
