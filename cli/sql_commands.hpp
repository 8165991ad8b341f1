#pragma once
// `laconic query "SQL"` (the user's own read-only SQL) and `laconic export` (whole tables,
// streamed as CSV or JSON).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laconic::cli {

struct QueryOptions {
  std::string sql;   ///< the statement, or
  std::string file;  ///< a file holding it ("-": standard input)
  std::string format = "table";
  double timeout = 60;                       ///< seconds; 0: no limit
  std::int64_t max_bytes = std::int64_t{256} << 20;  ///< the result's bytes: one value, and all rows together
};

/// `laconic query`: one read-only statement (storage::UserQuery), its rows in `format`. A
/// statement neither given nor readable, one past its time, or a result past `max_bytes` is a
/// ConfigError (exit 2).
int query_command(const std::string& db, const QueryOptions& options);

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
