#pragma once
// The entry point of `laconic report`: an experiment's comparison as Markdown and HTML files.
#include <string>

#include "storage/database.hpp"

namespace laconic::reports {

/// Where write_report() put its files.
struct ReportPaths {
  std::string markdown;  ///< <out_dir>/report.md
  std::string html;      ///< <out_dir>/index.html
};

/// Writes report.md and index.html comparing the runs of `experiment` into out_dir (created if
/// missing). ConfigError if the experiment has no runs (message lists the experiments that
/// exist) or a file cannot be written.
ReportPaths write_report(storage::Database& db, const std::string& experiment, const std::string& out_dir);

}  // namespace laconic::reports
