#pragma once
// `laconic runs` and `laconic best`: run listings read from runs and run_summary only (never the
// metrics table), on a read-only connection, so they stay fast and work while a sweep writes.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/goal.hpp"
#include "engine/core/metric_keys.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/user_query.hpp"

namespace laconic::cli {

/// ConfigError (exit 2) naming what to do when the database `path` does not exist.
void require_database(const std::string& path);

/// Opens `path` read-only; a missing file is the user's error (ConfigError, exit 2).
std::unique_ptr<storage::Database> open_for_reading(const std::string& path);

struct RunsArgs {
  std::string db;
  std::optional<std::string> experiment;  ///< only runs of this experiment
  std::optional<std::string> status;      ///< only runs with this status
  std::vector<std::string> where;         ///< key=value conditions, all must hold
  std::vector<std::string> metrics;       ///< extra columns: KEY or KEY:last|min|max|mean|sum
  bool wide = false;                      ///< add test_loss, test_ppl, ratio, seed, attempts, host
  std::string format = "table";           ///< table, csv or json
  std::vector<std::string> tags;          ///< only runs with every one of these tags
  bool watch = false;                     ///< redraw every `interval` seconds until interrupted
  double interval = 2;                    ///< seconds between redraws with `watch`
  std::int64_t times = 0;                 ///< with `watch`: stop after this many listings; 0 = never
};

/// Every field of a run as csv / json show it (`runs --format csv|json`, `export --what runs`):
/// the names, and one run's cells in that order (NaN and absent values as NULL).
const std::vector<std::string>& run_columns();
std::vector<storage::Cell> run_cells(const storage::RunRow& run);

/// `laconic runs`: one line per run (table), or every field (csv, json).
int runs_command(const RunsArgs& args);

struct BestArgs {
  std::string db;
  std::string metric = keys::kTestAccuracy;
  std::optional<std::string> experiment;
  std::optional<std::string> status;
  std::vector<std::string> where;
  std::string goal;            ///< "max", "min", or "" for the key's default
  std::string by = "run";      ///< rank runs, or "configuration": mean over seeds per configuration
  std::string value = "last";  ///< last, min, max or mean of the key's run_summary row
  int top = 10;
  std::string format = "table";
};

/// `laconic best`: the runs ranked by one metric's final (or min / max / mean) value; with
/// `by` "configuration", the configurations (runs alike but for the seed) ranked by the mean of
/// that value over their runs, with its sample std and n.
int best_command(const BestArgs& args);

}  // namespace laconic::cli
