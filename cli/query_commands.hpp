#pragma once
// The read-side commands: they open the database read-only, so they work while a sweep writes.
#include <optional>
#include <string>

namespace laconic::cli {

/// `laconic runs`: one line per run (id, experiment, run, status, final test accuracy, bytes
/// sent, wall time).
int runs_command(const std::string& db, const std::optional<std::string>& experiment,
                 const std::optional<std::string>& status);

/// `laconic report`: writes report.md and index.html for an experiment and prints their paths.
int report_command(const std::string& db, const std::string& experiment, const std::string& out);

}  // namespace laconic::cli
