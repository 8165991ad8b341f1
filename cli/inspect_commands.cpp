#include "cli/inspect_commands.hpp"

#include <cmath>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/format.hpp"
#include "cli/output.hpp"
#include "cli/runs_command.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "reports/format.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"
#include "storage/run_where.hpp"

namespace laconic::cli {
namespace {

std::string json_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

namespace {

// `show --format json`: {"run": every field as `runs --format json` has it, "summary": one object
// per key, "epochs": one object per epoch, "facts": run_facts as one object}, encoded as
// RowWriter encodes JSON (NaN "NaN").
void show_json(storage::Database& db, const storage::RunRow& run) {
  std::string out = "{\"run\": ";
  append_json_object(out, run_columns(), run_cells(run));
  out += ",\n\"summary\": [";
  const std::vector<std::string> summary_columns{"key", "last", "min", "max", "mean", "sum", "count", "nan_count"};
  bool first = true;
  for (const auto& [key, s] : storage::summary_of(db, run.id)) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    const double mean = s.count ? s.sum / static_cast<double>(s.count) : std::nan("");
    append_json_object(out, summary_columns,
                       {text_cell(key), real_cell(s.last), real_cell(s.min), real_cell(s.max), real_cell(mean),
                        real_cell(s.sum), integer_cell(s.count), integer_cell(s.nan_count)});
  }
  out += "],\n\"epochs\": [";
  const std::vector<std::string> epoch_columns{
      "epoch",          keys::kTestAccuracy, keys::kTestLoss,  keys::kTestPerplexity, keys::kEpochTrainLoss,
      keys::kEpochTime, keys::kBytesSent,    keys::kBytesDense};
  first = true;
  for (const auto& e : storage::epochs_of(db, run.id)) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    append_json_object(
        out, epoch_columns,
        {integer_cell(e.epoch), real_cell(e.test_accuracy), real_cell(e.test_loss), real_cell(e.test_perplexity),
         real_cell(e.epoch_train_loss), real_cell(e.epoch_time), real_cell(e.bytes_sent), real_cell(e.bytes_dense)});
  }
  out += "],\n\"facts\": ";
  std::vector<std::string> fact_keys;
  std::vector<storage::Cell> fact_values;
  for (const auto& [key, value] : storage::facts_of(db, run.id)) {
    fact_keys.push_back(key);
    fact_values.push_back(text_cell(value));
  }
  append_json_object(out, fact_keys, fact_values);
  out += "}\n";
  std::cout << out;
}

}  // namespace

int show_command(const std::string& db_path, std::int64_t run_id, const std::string& format_text) {
  const Format format = parse_format(format_text);
  if (format == Format::Csv)
    throw ConfigError("show --format: table or json (for CSV: laconic export --format csv --what metrics --run ID)");
  auto db = open_for_reading(db_path);
  const storage::RunRow run = storage::require_run(*db, run_id);
  if (format == Format::Json) {
    show_json(*db, run);
    return 0;
  }
  std::vector<std::vector<std::string>> facts{
      {"experiment", run.experiment},
      {"status", run.status_label()},
  };
  if (!run.error.empty()) facts.push_back({"error", run.error});
  facts.push_back({"seed", str_cat(run.seed, " (repetition ", run.repetition, ")")});
  if (!run.tags.empty()) {
    std::string tags;
    for (const auto& tag : run.tags) tags += (tags.empty() ? "" : ", ") + tag;
    facts.push_back({"tags", tags});
  }
  if (!run.note.empty()) facts.push_back({"note", run.note});
  facts.push_back({"host", run.host.empty() ? "-" : str_cat(run.host, " (controller pid ", run.controller_pid, ")")});
  facts.push_back({"attempts", std::to_string(run.attempts)});
  facts.push_back({"checkpoint_step", run.checkpoint_step ? std::to_string(*run.checkpoint_step) : "-"});
  facts.push_back({"created", local_time(run.created)});
  facts.push_back({"started", local_time(run.started)});
  facts.push_back({"ended", local_time(run.ended)});
  facts.push_back({"heartbeat", local_time(run.heartbeat)});
  const storage::RunFacts run_facts = storage::run_facts_of(*db, run.id);
  const bool thread_cpu = run_facts.thread_ranks();
  facts.push_back({"wall time", reports::human_seconds(run.wall_time) + " (measured: started to ended)"});
  facts.push_back({"laconic", run.laconic_version.empty() ? "-" : run.laconic_version});
  std::cout << "run " << run.id << ": " << run.name << "\n\n" << text_table({"", ""}, facts).substr(1) << "\n";

  std::cout << "how it ran (run_facts)\n";
  std::vector<std::vector<std::string>> fact_rows;
  for (const auto& [key, value] : run_facts.text) fact_rows.push_back({"  " + key, "= " + value});
  std::cout << (fact_rows.empty() ? "  (none recorded)\n" : text_table({"", ""}, fact_rows).substr(1)) << "\n";

  std::cout << "swept variables\n";
  const auto swept = nlohmann::json::parse(run.swept, nullptr, false);
  std::vector<std::vector<std::string>> swept_rows;
  if (swept.is_object())
    for (const auto& [key, value] : swept.items()) swept_rows.push_back({"  " + key, "= " + json_text(value)});
  std::cout << (swept_rows.empty() ? "  (none)\n" : text_table({"", ""}, swept_rows).substr(1)) << "\n";

  std::cout << "configuration\n";
  const auto config = nlohmann::json::parse(run.config, nullptr, false);
  std::cout << (config.is_discarded() ? run.config : config.dump(2)) << "\n\n";

  const auto summary = storage::summary_of(*db, run.id);
  std::cout << "summary (run_summary: over every step and worker; mean = sum / count of non-NaN values)\n";
  if (summary.empty()) {
    std::cout << "  no metrics recorded\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, s] : summary)
      rows.push_back({key, metric_text(key, s.last), s.count ? metric_text(key, s.min) : "-",
                      s.count ? metric_text(key, s.max) : "-",
                      s.count ? metric_text(key, s.sum / static_cast<double>(s.count)) : "-", std::to_string(s.count),
                      std::to_string(s.nan_count)});
    std::cout << text_table({"key", "last", "min", "max", "mean", "count", "nan_count"}, rows);
  }

  const auto epochs = storage::epochs_of(*db, run.id);
  // Which clock an epoch's time is on (the run fact rank_clock): thread ranks time their phases on
  // their CPU and derive the waits, so their epochs are not the run's wall time.
  std::cout << "\nper epoch (test metrics of worker 0; train loss: mean over workers; epoch time: slowest worker, "
            << (thread_cpu ? "derived (thread ranks: each rank's CPU time and its waits for what it received, not "
                             "wall time)"
                           : "measured wall clock")
            << "; bytes: all workers)\n";
  if (epochs.empty()) {
    std::cout << "  no epoch recorded yet\n";
    return 0;
  }
  bool perplexity = false;
  for (const auto& e : epochs) perplexity = perplexity || !std::isnan(e.test_perplexity);
  std::vector<std::string> header{"epoch", "test_acc", keys::kTestLoss};
  if (perplexity) header.push_back("test_ppl");
  header.insert(header.end(), {keys::kTrainLoss, keys::kEpochTime, keys::kBytesSent, "ratio"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : epochs) {
    std::vector<std::string> row{std::to_string(e.epoch + 1), reports::fixed(e.test_accuracy, 4),
                                 reports::fixed(e.test_loss, 4)};
    if (perplexity) row.push_back(reports::fixed(e.test_perplexity, 2));
    row.insert(row.end(), {reports::fixed(e.epoch_train_loss, 4), reports::human_seconds(e.epoch_time),
                           reports::human_bytes(e.bytes_sent), reports::ratio(e.bytes_dense, e.bytes_sent)});
    rows.push_back(std::move(row));
  }
  std::cout << text_table(header, rows);
  return 0;
}

std::string compare_figure(const std::string& key) {
  if (keys::is_byte_key(key)) return "sum";
  if (key.starts_with("test_") || key.starts_with("epoch_") || key == keys::kConsensusDistance ||
      key == keys::kStoppedEarly || key == keys::kTrainLoss || key == keys::kLr)
    return "last";
  return "mean";
}

namespace {

// One row of `compare`: a field, its cell in each run, and whether they differ.
struct CompareRow {
  std::string field;
  std::vector<std::string> cells;
  bool differs = false;
};

// A run's configuration flattened to paths ("optimizer.lr"), without the swept copies.
std::map<std::string, nlohmann::json> flat_config(const storage::RunRow& run) {
  std::map<std::string, nlohmann::json> flat;
  const auto config = nlohmann::json::parse(run.config, nullptr, false);
  if (config.is_object())
    for (auto& [path, value] : storage::flatten_json(config))
      if (!path.starts_with("swept.")) flat[path] = value;  // swept repeats config fields
  return flat;
}

// A row per configuration path any run has. Config values compare as JSON; numbers exactly.
void add_config_rows(const std::vector<std::map<std::string, nlohmann::json>>& configs, std::vector<CompareRow>& rows) {
  std::set<std::string> paths;
  for (const auto& c : configs)
    for (const auto& [path, value] : c) paths.insert(path);
  for (const auto& path : paths) {
    CompareRow row{path, {}, false};
    std::string first;
    for (std::size_t r = 0; r < configs.size(); ++r) {
      const auto it = configs[r].find(path);
      const std::string exact = it == configs[r].end() ? "\x01missing" : it->second.dump();
      row.cells.push_back(it == configs[r].end() ? "-" : json_text(it->second));
      if (r == 0) first = exact;
      row.differs = row.differs || exact != first;
    }
    rows.push_back(std::move(row));
  }
}

void add_number_row(std::vector<CompareRow>& rows, const std::string& field, const std::vector<double>& values,
                    const std::function<std::string(double)>& text) {
  CompareRow row{field, {}, false};
  for (double v : values) {
    row.cells.push_back(text(v));
    const double a = values.front();
    row.differs = row.differs || !((std::isnan(a) && std::isnan(v)) || a == v);
  }
  rows.push_back(std::move(row));
}

// Status, wall time, compression ratio, then every metric by its compare_figure().
void add_result_rows(const std::vector<storage::RunRow>& runs,
                     const std::vector<std::map<std::string, storage::Summary>>& summaries, bool exact,
                     std::vector<CompareRow>& rows) {
  CompareRow status{"status", {}, false};
  for (const auto& run : runs) {
    status.cells.push_back(run.status_label());
    status.differs = status.differs || run.status_label() != runs.front().status_label();
  }
  rows.push_back(status);
  std::vector<double> walls, ratios;
  for (const auto& run : runs) {
    walls.push_back(run.wall_time);
    ratios.push_back(run.bytes_sent > 0 ? run.bytes_dense / run.bytes_sent : std::nan(""));
  }
  // Tables are for reading (bytes in kB/MB/GB, 4 significant digits); csv and json carry exact values.
  add_number_row(rows, "wall_time", walls, exact ? number_text : reports::human_seconds);
  add_number_row(rows, "compression_ratio", ratios, [exact](double v) {
    if (exact) return number_text(v);
    return std::isnan(v) ? std::string("-") : reports::fixed(v, 2) + "x";
  });
  std::set<std::string> keys;
  for (const auto& s : summaries)
    for (const auto& [key, summary] : s) keys.insert(key);
  for (const auto& key : keys) {
    const std::string figure = compare_figure(key);
    std::vector<double> values;
    for (const auto& s : summaries) {
      const auto it = s.find(key);
      const storage::Summary* v = it == s.end() ? nullptr : &it->second;
      values.push_back(v == nullptr          ? std::nan("")
                       : figure == "sum"     ? (v->count ? v->sum : std::nan(""))
                       : figure == "last"    ? v->last
                                             : (v->count ? v->sum / static_cast<double>(v->count) : std::nan("")));
    }
    add_number_row(rows, key + " (" + figure + ")", values,
                   [&key, exact](double v) { return exact ? number_text(v) : metric_text(key, v); });
  }
}

}  // namespace

int compare_command(const CompareArgs& args) {
  const Format format = parse_format(args.format);
  if (args.runs.size() < 2) throw ConfigError(str_cat("compare needs at least two run ids, got ", args.runs.size()));
  auto db = open_for_reading(args.db);
  std::vector<storage::RunRow> runs;
  std::vector<std::map<std::string, nlohmann::json>> configs;
  std::vector<std::map<std::string, storage::Summary>> summaries;
  for (const auto id : args.runs) {
    runs.push_back(storage::require_run(*db, id));
    configs.push_back(flat_config(runs.back()));
    summaries.push_back(storage::summary_of(*db, id));
  }
  std::vector<CompareRow> rows;
  add_config_rows(configs, rows);
  add_result_rows(runs, summaries, format != Format::Table, rows);

  std::vector<std::string> header{"diff", "field"};
  for (const auto& run : runs) header.push_back(str_cat("run ", run.id));
  RowWriter writer(std::cout, format);
  writer.header(header);
  std::size_t differing = 0;
  for (const auto& row : rows) {
    differing += row.differs ? 1 : 0;
    if (args.diff_only && !row.differs) continue;
    std::vector<storage::Cell> cells{text_cell(row.differs ? "*" : ""), text_cell(row.field)};
    for (const auto& cell : row.cells) cells.push_back(text_cell(cell));
    writer.row(cells);
  }
  writer.finish();
  if (format == Format::Table)
    std::cout << differing << " of " << rows.size() << " rows differ (marked *)"
              << (args.diff_only ? "" : "; --diff-only shows only those") << "\n";
  return 0;
}

}  // namespace laconic::cli
