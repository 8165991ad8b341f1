#pragma once
// `laconic query "SQL"` (the user's own read-only SQL) and `laconic export` (whole tables,
// streamed as CSV or JSON).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laconic::cli {

/// `laconic query`: runs one read-only statement and prints its rows (table, csv or json).
int query_command(const std::string& db, const std::string& sql, const std::string& format, double timeout = 60);

struct ExportArgs {
  std::string db;
  std::string format = "csv";    ///< csv or json
  std::string what = "metrics";  ///< runs, metrics or summary
  std::optional<std::string> experiment;
  std::vector<std::int64_t> runs;  ///< only these run ids
  std::vector<std::string> keys;   ///< only these metric keys (metrics, summary)
  std::string out;                 ///< file; "" or "-" for standard output
};

/// `laconic export`: streams the rows, so memory stays flat however many there are.
int export_command(const ExportArgs& args);

}  // namespace laconic::cli
