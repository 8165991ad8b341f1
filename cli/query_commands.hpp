#pragma once
// The report command: it opens the database read-only, so it works while a sweep writes. The
// other read-side commands are in runs_command.hpp, inspect_commands.hpp and sql_commands.hpp.
#include <string>

namespace laconic::cli {

/// `laconic report`: writes report.md and index.html for an experiment and prints their paths.
int report_command(const std::string& db, const std::string& experiment, const std::string& out);

}  // namespace laconic::cli
