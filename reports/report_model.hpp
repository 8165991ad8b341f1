#pragma once
// Builds the document model of an experiment's comparison report from storage.
#include <string>

#include "reports/table.hpp"
#include "storage/database.hpp"

namespace laconic::reports {

/// The comparison of `experiment`'s runs: one row per run name (its latest run), then one
/// per-epoch table per run. ConfigError if the experiment has no runs (the message lists the
/// experiments that exist).
Report build_report(storage::Database& db, const std::string& experiment);

}  // namespace laconic::reports
