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
namespace {

using storage::Cell;

std::vector<Cell> run_cells(const storage::RunRow& run) {
  auto real = [](double v) { return std::isnan(v) ? null_cell() : real_cell(v); };
  return {integer_cell(run.id),
          text_cell(run.experiment),
          text_cell(run.name),
          text_cell(run.status_label()),
          run.error.empty() ? null_cell() : text_cell(run.error),
          integer_cell(run.seed),
          integer_cell(run.repetition),
          real(run.created),
          real(run.started),
          real(run.ended),
          real(run.heartbeat),
          real_cell(run.wall_time),
          real(run.final_test_accuracy),
          real(run.final_test_loss),
          real(run.final_test_perplexity),
          real_cell(run.bytes_sent),
          real_cell(run.bytes_dense),
          run.bytes_sent > 0 ? real_cell(run.bytes_dense / run.bytes_sent) : null_cell(),
          text_cell(run.host),
          integer_cell(run.controller_pid),
          integer_cell(run.attempts),
          run.checkpoint_step ? integer_cell(*run.checkpoint_step) : null_cell(),
          text_cell(run.laconic_version),
          json_cell(run.swept),
          json_cell(run.config)};
}

const std::vector<std::string> kRunColumns{
    "id",           "experiment",     "name",       "status",          "error",
    "seed",         "repetition",     "created",    "started",         "ended",
    "heartbeat",    "wall_time",      "final_test_accuracy", "final_test_loss", "final_test_perplexity",
    "bytes_sent",   "bytes_dense",    "compression_ratio",   "host",     "controller_pid",
    "attempts",     "checkpoint_step", "laconic_version",    "swept",    "config"};

}  // namespace

int query_command(const std::string& db_path, const std::string& sql, const std::string& format_text) {
  const Format format = parse_format(format_text);
  auto db = open_for_reading(db_path);
  storage::UserQuery query(*db, sql);
  RowWriter writer(std::cout, format);
  writer.header(query.columns());
  std::vector<Cell> row;
  while (query.next(row)) writer.row(row);
  writer.finish();
  return 0;
}

int export_command(const ExportArgs& args) {
  const Format format = parse_format(args.format);
  if (format == Format::Table) throw ConfigError("export writes csv or json; for a table use laconic runs or query");
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
    writer.header(kRunColumns);
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
