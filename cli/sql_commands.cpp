#include "cli/sql_commands.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <unistd.h>

#include "cli/output.hpp"
#include "cli/runs_command.hpp"
#include "engine/core/error.hpp"
#include "storage/export.hpp"
#include "storage/queries.hpp"
#include "storage/user_query.hpp"

namespace laconic::cli {

using storage::Cell;

namespace {

// The statement: given, or read from a file or standard input.
std::string statement_of(const QueryOptions& options) {
  if (options.file.empty()) {
    if (options.sql.empty())
      throw ConfigError("laconic query needs one SQL statement: as an argument, or --file FILE (\"-\": standard input)");
    return options.sql;
  }
  std::ifstream file;
  if (options.file != "-") {
    file.open(options.file, std::ios::binary);
    if (!file) throw ConfigError(str_cat("--file: cannot read '", options.file, "'"));
  }
  std::istream& in = options.file == "-" ? std::cin : file;
  std::string sql((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ConfigError(str_cat("--file: reading '", options.file, "' failed"));
  return sql;
}

// What a row costs against --max-bytes: its values, or, in table format, which buffers every row
// to size the columns, the memory the buffered row holds (a string per cell, a vector per row):
// a table of many small cells took 11x its values' bytes.
std::size_t bytes_of(const std::vector<Cell>& row, Format format) {
  std::size_t bytes = 0;
  for (const Cell& cell : row)
    bytes += format == Format::Table ? sizeof(std::string) + (cell.text.size() > 15 ? cell.text.size() + 1 : 0)
                                     : cell.text.size() + sizeof(std::int64_t);
  return bytes + (format == Format::Table ? sizeof(std::vector<std::string>) : 0);
}

}  // namespace

int query_command(const std::string& db_path, const QueryOptions& options) {
  const Format format = parse_format(options.format);
  const std::string sql = statement_of(options);
  auto db = open_for_reading(db_path);
  storage::UserQuery query(*db, sql, options.timeout, options.max_bytes);
  RowWriter writer(std::cout, format);
  writer.header(query.columns());
  std::vector<Cell> row;
  std::size_t bytes = 0;
  while (query.next(row)) {
    bytes += bytes_of(row, format);
    if (bytes > static_cast<std::size_t>(options.max_bytes)) {
      writer.finish();
      throw ConfigError(str_cat("the result passed ", options.max_bytes, " bytes after ", writer.rows(),
                                " rows and was stopped (--max-bytes N allows more; LIMIT or WHERE, less)"));
    }
    writer.row(row);
  }
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
  // Written beside --out and renamed once complete: an export that fails leaves no partial file.
  const std::string partial = str_cat(args.out, ".partial-", ::getpid());
  struct RemovePartial {
    const std::string& path;
    bool keep = false;
    ~RemovePartial() {
      std::error_code ignored;
      if (!keep) std::filesystem::remove(path, ignored);
    }
  } cleanup{partial};
  if (!args.out.empty() && args.out != "-") {
    file = std::make_unique<std::ofstream>();
    file->rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    file->open(partial, std::ios::binary | std::ios::trunc);
    if (!*file) throw ConfigError(str_cat("--out: cannot write ", args.out));
    out = file.get();
  }
  RowWriter writer(*out, format);
  storage::RowSink sink{[&](const std::vector<std::string>& columns) { writer.header(columns); },
                        [&](const std::vector<Cell>& cells) { writer.row(cells); }};
  storage::ExportFilter filter{args.experiment, args.runs, args.keys};
  if (args.what == "runs") {
    writer.header(run_columns());
    for (const auto& run : storage::list_runs(*db, {args.experiment, std::nullopt, std::nullopt})) {
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
    std::filesystem::rename(partial, args.out);
    cleanup.keep = true;
    std::cerr << "wrote " << writer.rows() << " " << args.what << " rows to " << args.out << "\n";
  }
  return 0;
}

}  // namespace laconic::cli
