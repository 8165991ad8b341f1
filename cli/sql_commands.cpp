#include "cli/sql_commands.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/output.hpp"
#include "cli/runs_command.hpp"
#include "engine/core/error.hpp"
#include "storage/export.hpp"
#include "storage/queries.hpp"
#include "storage/user_query.hpp"

namespace laconic::cli {

using storage::Cell;

int query_command(const std::string& db_path, const std::string& sql, const std::string& format_text, double timeout) {
  const Format format = parse_format(format_text);
  auto db = open_for_reading(db_path);
  storage::UserQuery query(*db, sql, timeout);
  RowWriter writer(std::cout, format);
  writer.header(query.columns());
  std::vector<Cell> row;
  while (query.next(row)) writer.row(row);
  writer.finish();
  return 0;
}

int export_command(const ExportArgs& args) {
  if (args.format != "csv" && args.format != "json")
    throw ConfigError(str_cat("--format: export writes csv or json, got '", args.format, "'",
                              args.format == "table" ? "; for a table use laconic runs or query" : ""));
  const Format format = parse_format(args.format);
  if (args.what != "runs" && args.what != "metrics" && args.what != "summary")
    throw ConfigError(str_cat("--what: unknown table '", args.what, "'; known: runs, metrics, summary"));
  if (args.what == "runs" && !args.keys.empty()) throw ConfigError("--key applies to --what metrics or summary");
  auto db = open_for_reading(args.db);
  for (const auto id : args.runs) storage::require_run(*db, id);

  std::unique_ptr<std::ofstream> file;
  std::ostream* out = &std::cout;
  std::vector<char> buffer(1 << 20);
  if (!args.out.empty() && args.out != "-") {
    file = std::make_unique<std::ofstream>();
    file->rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    file->open(args.out, std::ios::binary | std::ios::trunc);
    if (!*file) throw ConfigError(str_cat("--out: cannot write ", args.out));
    out = file.get();
  }
  RowWriter writer(*out, format);
  storage::RowSink sink{[&](const std::vector<std::string>& columns) { writer.header(columns); },
                        [&](const std::vector<Cell>& cells) { writer.row(cells); }};
  storage::ExportFilter filter{args.experiment, args.runs, args.keys};
  if (args.what == "runs") {
    writer.header(run_columns());
    for (const auto& run : storage::list_runs(*db, {args.experiment, std::nullopt})) {
      if (!args.runs.empty() && std::find(args.runs.begin(), args.runs.end(), run.id) == args.runs.end()) continue;
      writer.row(run_cells(run));
    }
  } else if (args.what == "metrics") {
    storage::export_metrics(*db, filter, sink);
  } else {
    storage::export_summary(*db, filter, sink);
  }
  writer.finish();
  if (file) {
    file->close();
    if (!*file) throw StorageError(str_cat("--out: writing ", args.out, " failed"), -1);
    std::cerr << "wrote " << writer.rows() << " " << args.what << " rows to " << args.out << "\n";
  }
  return 0;
}

}  // namespace laconic::cli
