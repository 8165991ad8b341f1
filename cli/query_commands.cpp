#include "cli/query_commands.hpp"

#include <cmath>
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

int report_command(const ReportArgs& args) {
  auto db = storage::Database::open_read_only(args.db);
  const std::string dir = args.out.empty() ? "laconic-reports/" + args.experiment : args.out;
  reports::ReportOptions options;
  options.target = args.target;
  options.gnuplot.executable = args.gnuplot;
  const auto paths = reports::write_report(*db, args.experiment, dir, options);
  for (const auto& warning : paths.warnings) std::cerr << "laconic: warning: " << warning << "\n";
  std::cout << "report: " << paths.html << "\n"
            << "        " << paths.markdown << "\n"
            << "        " << paths.csv.size() << " tables in " << dir << "/tables, figures in " << dir
            << "/figures\n";
  if (!std::isnan(paths.target))
    std::cout << "target: " << paths.metric << (paths.metric == "test_perplexity" ? " <= " : " >= ")
              << paths.target << (args.target ? "" : " (default; set with --target)") << "\n";
  return 0;
}

}  // namespace laconic::cli
