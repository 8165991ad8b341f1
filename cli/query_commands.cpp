#include "cli/query_commands.hpp"

#include <cmath>
#include <iostream>

#include "advise/advice.hpp"
#include "cli/runs_command.hpp"
#include "engine/core/metric_keys.hpp"
#include "reports/report.hpp"
#include "storage/database.hpp"

namespace laconic::cli {

int report_command(const ReportArgs& args) {
  auto db = open_for_reading(args.db);  // a missing file is the user's to fix: exit 2
  std::string joined;
  for (const auto& e : args.experiments) joined += (joined.empty() ? "" : "-vs-") + e;
  const std::string dir = args.out.empty() ? "laconic-reports/" + joined : args.out;
  reports::ReportOptions options;
  options.target = args.target;
  options.tolerance = args.tolerance;
  options.baseline = args.baseline;
  for (const auto& link : args.links) options.links.push_back(parse_link(link));
  if (!args.hardware.empty()) options.hardware = read_hardware_profile(args.hardware);
  options.gnuplot.executable = args.gnuplot;
  options.added_sections = {advise::advice_section};
  const auto paths = reports::write_report(*db, args.experiments, dir, options);
  for (const auto& warning : paths.warnings) std::cerr << "laconic: warning: " << warning << "\n";
  std::cout << "report: " << paths.html << "\n"
            << "        " << paths.markdown << "\n"
            << "        " << paths.csv.size() << " tables in " << dir << "/tables, figures in " << dir << "/figures\n";
  for (const auto& target : paths.targets)
    std::cout << "target: " << target << (args.target ? "" : "; --target or --tolerance change it") << "\n";
  if (paths.warnings.empty() || args.allow_missing_figures) return 0;
  std::cerr << "laconic: " << paths.warnings.size() << " figure" << (paths.warnings.size() == 1 ? "" : "s")
            << " could not be drawn (the tables and documents are written); fix the cause above, or pass "
               "--allow-missing-figures to accept a report without them\n";
  return kMissingFiguresExitStatus;
}

}  // namespace laconic::cli
