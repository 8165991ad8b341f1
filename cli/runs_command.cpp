#include "cli/runs_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/format.hpp"
#include "cli/output.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/suggest.hpp"
#include "reports/format.hpp"
#include "reports/report_model.hpp"
#include "reports/stats.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"
#include "storage/run_where.hpp"
#include "storage/statement.hpp"

namespace laconic::cli {
namespace {

using storage::Cell;

// A --metric column: the key and which figure of its run_summary row.
struct MetricColumn {
  std::string key;
  std::string figure = "last";
  std::string label() const { return figure == "last" ? key : key + ":" + figure; }
};

double figure_of(const storage::Summary& s, const std::string& figure) {
  if (figure == "last") return s.last;
  if (figure == "min") return s.min;
  if (figure == "max") return s.max;
  if (figure == "sum") return s.count > 0 ? s.sum : std::nan("");
  return s.count > 0 ? s.sum / static_cast<double>(s.count) : std::nan("");  // mean
}

void check_figure(const std::string& figure, const std::string& flag) {
  static const std::vector<std::string> known{"last", "min", "max", "mean", "sum"};
  if (std::find(known.begin(), known.end(), figure) == known.end())
    throw ConfigError(str_cat(flag, ": unknown figure '", figure, "'; known: last, min, max, mean, sum"));
}

MetricColumn parse_metric_column(const std::string& text) {
  MetricColumn column;
  const auto colon = text.find(':');
  column.key = text.substr(0, colon);
  if (colon != std::string::npos) column.figure = text.substr(colon + 1);
  check_figure(column.figure, str_cat("--metric ", text));
  return column;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// ConfigError when no run (of the experiment, if given) recorded `key`, listing those that were.
void require_key(storage::Database& db, const std::string& key, const std::optional<std::string>& experiment,
                 const std::string& flag) {
  const auto keys = storage::metric_keys(db, experiment);
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  const std::string suggestion = closest_name(key, keys);
  throw ConfigError(str_cat(flag, ": no run", experiment ? " of experiment '" + *experiment + "'" : std::string(),
                            " recorded metric '", key, "'",
                            suggestion.empty() ? std::string() : "; did you mean '" + suggestion + "'?",
                            " (recorded keys: ", keys.empty() ? "none" : join(keys), ")"));
}

std::vector<storage::RunRow> selected_runs(storage::Database& db, const std::optional<std::string>& experiment,
                                           const std::optional<std::string>& status,
                                           const std::vector<std::string>& where) {
  if (experiment) {
    bool known = false;
    for (const auto& e : storage::list_experiments(db)) known = known || e.name == *experiment;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& e : storage::list_experiments(db))
        if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
      throw ConfigError(str_cat("--experiment: no experiment '", *experiment, "' in ", db.path(),
                                "; recorded: ", names.empty() ? "(none)" : join(names)));
    }
  }
  return storage::runs_where(db, {experiment, status, std::nullopt}, where);
}

// Tags as `laconic runs` and csv / json show them: "baseline,paper".
std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

Cell optional_real(double value) { return std::isnan(value) ? null_cell() : real_cell(value); }

}  // namespace

const std::vector<std::string>& run_columns() {
  static const std::vector<std::string> columns{"id",
                                                "experiment",
                                                "name",
                                                "status",
                                                "error",
                                                "seed",
                                                "repetition",
                                                "created",
                                                "started",
                                                "ended",
                                                "heartbeat",
                                                "wall_time",
                                                "final_test_accuracy",
                                                "final_test_loss",
                                                "final_test_perplexity",
                                                keys::kBytesSent,
                                                keys::kBytesDense,
                                                "compression_ratio",
                                                "host",
                                                "controller_pid",
                                                "attempts",
                                                "checkpoint_step",
                                                "laconic_version",
                                                "swept",
                                                "config",
                                                "tags",
                                                "note"};
  return columns;
}

std::vector<Cell> run_cells(const storage::RunRow& run) {
  return {integer_cell(run.id),
          text_cell(run.experiment),
          text_cell(run.name),
          text_cell(run.status_label()),
          run.error.empty() ? null_cell() : text_cell(run.error),
          integer_cell(run.seed),
          integer_cell(run.repetition),
          optional_real(run.created),
          optional_real(run.started),
          optional_real(run.ended),
          optional_real(run.heartbeat),
          real_cell(run.wall_time),
          optional_real(run.final_test_accuracy),
          optional_real(run.final_test_loss),
          optional_real(run.final_test_perplexity),
          real_cell(run.bytes_sent),
          real_cell(run.bytes_dense),
          optional_real(run.compression_ratio()),
          text_cell(run.host),
          integer_cell(run.controller_pid),
          integer_cell(run.attempts),
          run.checkpoint_step ? integer_cell(*run.checkpoint_step) : null_cell(),
          text_cell(run.laconic_version),
          json_cell(run.swept),
          json_cell(run.config),
          text_cell(join_words(run.tags)),
          run.note.empty() ? null_cell() : text_cell(run.note)};
}

void require_database(const std::string& path) {
  if (path != ":memory:" && !std::filesystem::exists(path))
    throw ConfigError(str_cat("database ", path, " does not exist; give --db PATH (or set LACONIC_DB), or record ",
                              "runs first with laconic run FILE.lua"));
}

std::unique_ptr<storage::Database> open_for_reading(const std::string& path) {
  require_database(path);
  return storage::Database::open_read_only(path);
}

namespace {

bool has_tags(const storage::RunRow& run, const std::vector<std::string>& tags) {
  return std::all_of(tags.begin(), tags.end(), [&](const std::string& tag) {
    return std::find(run.tags.begin(), run.tags.end(), tag) != run.tags.end();
  });
}

// Under the table, when some listed runs trained on thread ranks: their epoch and step times are on
// the derived clock (storage::RankClock::ThreadCpu), which measured_wall is not.
void print_thread_rank_note(storage::Database& db, const std::vector<storage::RunRow>& runs) {
  const auto clocks = storage::rank_clocks_of_runs(db);
  const auto on_threads = std::count_if(runs.begin(), runs.end(), [&](const storage::RunRow& run) {
    const auto it = clocks.find(run.id);
    return it != clocks.end() && it->second == storage::RankClock::ThreadCpu;
  });
  if (on_threads == 0) return;
  std::cout << "measured_wall: each run's elapsed time on this machine. " << on_threads << " of " << runs.size()
            << " runs trained on thread ranks: their epoch and step times are derived from each rank's CPU "
               "time (laconic show ID names each clock), and the report's times to target are derived or "
               "projected, not this.\n";
}

// One listing of the runs, as `laconic runs` prints it once (or at every redraw of --watch).
void print_runs(storage::Database& database, const RunsArgs& args, Format format) {
  storage::Database* db = &database;
  std::vector<storage::RunRow> runs;
  for (auto& run : selected_runs(*db, args.experiment, args.status, args.where))
    if (has_tags(run, args.tags)) runs.push_back(std::move(run));
  std::vector<MetricColumn> extra;
  std::map<std::string, std::map<std::int64_t, storage::Summary>> extra_values;
  for (const auto& text : args.metrics) {
    extra.push_back(parse_metric_column(text));
    require_key(*db, extra.back().key, args.experiment, "--metric " + text);
    extra_values[extra.back().key] = storage::summaries_of_key(*db, extra.back().key);
  }
  auto extra_cells = [&](const storage::RunRow& run, std::vector<Cell>& cells) {
    for (const auto& column : extra) {
      const auto& values = extra_values[column.key];
      const auto it = values.find(run.id);
      cells.push_back(it == values.end() ? null_cell() : optional_real(figure_of(it->second, column.figure)));
    }
  };

  RowWriter writer(std::cout, format);
  if (format != Format::Table) {
    std::vector<std::string> columns = run_columns();
    columns.push_back("compute_utilization");
    for (const auto& column : extra) columns.push_back(column.label());
    writer.header(columns);
    for (const auto& run : runs) {
      std::vector<Cell> cells = run_cells(run);
      cells.push_back(optional_real(reports::run_compute_utilization(*db, run)));
      extra_cells(run, cells);
      writer.row(cells);
    }
    writer.finish();
    return;
  }

  if (runs.empty()) {
    std::cout << "no runs in " << args.db
              << (args.experiment || args.status || !args.where.empty() || !args.tags.empty() ? " match" : "") << "\n";
    return;
  }
  // A language model's runs have a perplexity: show it without being asked.
  const bool any_perplexity =
      std::any_of(runs.begin(), runs.end(), [](const auto& r) { return !std::isnan(r.final_test_perplexity); });
  std::vector<std::string> header{"id", "experiment", "run", "status", "test_acc"};
  if (args.wide) header.insert(header.end(), {keys::kTestLoss});
  if (args.wide || any_perplexity) header.push_back("test_ppl");
  header.insert(header.end(), {keys::kBytesSent});
  if (args.wide) header.insert(header.end(), {"ratio", "util", "seed", "attempts", "host", "oversubscribed", "busy"});
  std::map<std::int64_t, std::string> oversubscribed, busy;
  if (args.wide) {
    oversubscribed = storage::fact_of_runs(*db, "oversubscribed");
    busy = storage::fact_of_runs(*db, "host_demand");
  }
  // The run's elapsed time on this machine, start to end: not the step or epoch times, which on
  // thread ranks are derived (a note under the table says so).
  header.push_back("measured_wall");
  const bool any_tags = std::any_of(runs.begin(), runs.end(), [](const auto& r) { return !r.tags.empty(); });
  if (any_tags) header.push_back("tags");
  for (const auto& column : extra) header.push_back(column.label());
  writer.header(header);
  for (const auto& run : runs) {
    std::vector<Cell> cells{integer_cell(run.id), text_cell(run.experiment), text_cell(run.name),
                            text_cell(run.status_label()), text_cell(reports::fixed(run.final_test_accuracy, 4))};
    if (args.wide) cells.push_back(text_cell(reports::fixed(run.final_test_loss, 4)));
    if (args.wide || any_perplexity) cells.push_back(text_cell(reports::fixed(run.final_test_perplexity, 2)));
    cells.push_back(text_cell(reports::human_bytes(run.bytes_sent)));
    if (args.wide) {
      cells.push_back(text_cell(reports::ratio_text(run.compression_ratio())));  // as csv's compression_ratio
      cells.push_back(text_cell(reports::percent(reports::run_compute_utilization(*db, run))));
      cells.push_back(integer_cell(run.seed));
      cells.push_back(integer_cell(run.attempts));
      cells.push_back(text_cell(run.host));
      const auto it = oversubscribed.find(run.id);
      cells.push_back(text_cell(it == oversubscribed.end() ? "-" : it->second == "true" ? "yes" : "no"));
      // The cores its ranks and the host's other processes wanted, against the host's.
      const auto demand = busy.find(run.id);
      cells.push_back(text_cell(demand == busy.end() ? "-" : demand->second + " cores"));
    }
    cells.push_back(text_cell(reports::human_seconds(run.wall_time)));
    if (any_tags) cells.push_back(text_cell(run.tags.empty() ? "-" : join_words(run.tags)));
    for (const auto& column : extra) {
      const auto& values = extra_values[column.key];
      const auto it = values.find(run.id);
      cells.push_back(
          text_cell(it == values.end() ? "-" : metric_text(column.key, figure_of(it->second, column.figure))));
    }
    writer.row(cells);
  }
  writer.finish();
  print_thread_rank_note(*db, runs);
}

}  // namespace

int runs_command(const RunsArgs& args) {
  const Format format = parse_format(args.format);
  if (args.interval <= 0) throw ConfigError(str_cat("--interval must be > 0 seconds, got ", args.interval));
  auto db = open_for_reading(args.db);
  if (!args.watch) {
    print_runs(*db, args, format);
    return 0;
  }
  // Each listing reads in a transaction of its own, so it sees what the sweep committed since.
  const bool terminal = format == Format::Table && ::isatty(STDOUT_FILENO) == 1;
  for (std::int64_t shown = 0; args.times == 0 || shown < args.times; ++shown) {
    if (shown > 0) std::this_thread::sleep_for(std::chrono::duration<double>(args.interval));
    if (terminal)
      std::cout << "\x1b[H\x1b[2J";  // home and clear: one listing on the screen
    else if (shown > 0)
      std::cout << "\n";
    std::cout << "laconic runs --watch: " << local_time(storage::unix_now()) << ", every " << args.interval
              << " s (Ctrl-C to stop)\n";
    print_runs(*db, args, format);
    std::cout.flush();
  }
  return 0;
}

namespace {

// NaN ranks after every number; ties keep the earlier entry first.
bool ranks_before(double a, double b, Goal goal) {
  if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  return better(goal, a, b);
}

const char* better_word(Goal goal) { return goal == Goal::Max ? "higher" : "lower"; }

// What `best` ranks, parsed and checked once.
struct Ranking {
  std::string by;     ///< "run" or "configuration"
  std::string value;  ///< last, min, max, mean or sum
  Goal goal = Goal::Max;
  std::string what;  ///< the value in words, for the heading
};

Ranking ranking_of(const BestArgs& args) {
  Ranking r{args.by, args.value, Goal::Max, ""};
  // --by last|min|max|mean is the older spelling of --value.
  if (r.by == "last" || r.by == "min" || r.by == "max" || r.by == "mean" || r.by == "sum") {
    r.value = r.by;
    r.by = "run";
  }
  if (r.by != "run" && r.by != "configuration")
    throw ConfigError(str_cat("--by: unknown grouping '", args.by,
                              "'; known: run, configuration (and, for --value, last, min, max, mean)"));
  check_figure(r.value, "--value");
  const auto goal = args.goal.empty() ? std::optional<Goal>(keys::goal_of(args.metric)) : parse_goal(args.goal);
  if (!goal) throw ConfigError(str_cat("--goal: unknown goal '", args.goal, "'; known: max, min"));
  r.goal = *goal;
  if (args.top < 1) throw ConfigError(str_cat("--top must be at least 1, got ", args.top));
  r.what = r.value == "last" ? "final (last recorded)" : r.value;
  return r;
}

using ValuesByRun = std::map<std::int64_t, storage::Summary>;

// Configurations (runs alike but for the seed) ranked by the mean of their runs' values.
void rank_configurations(const BestArgs& args, const Ranking& r, const std::vector<storage::RunRow>& runs,
                         const ValuesByRun& values, std::size_t with_key, RowWriter& writer, Format format) {
  struct Group {
    const storage::RunRow* first = nullptr;
    std::vector<double> values;
    std::vector<std::int64_t> ids;
    reports::Stats stats{};
  };
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  for (const auto& run : runs) {
    const auto it = values.find(run.id);
    if (it == values.end()) continue;
    const std::string key = storage::configuration_key(run);
    Group& group = groups[key];
    if (!group.first) {
      group.first = &run;
      order.push_back(key);
    }
    group.values.push_back(figure_of(it->second, r.value));
    group.ids.push_back(run.id);
  }
  std::vector<Group*> ranked;
  for (const auto& key : order) {
    Group& group = groups[key];
    group.stats = reports::stats_of(group.values);
    ranked.push_back(&group);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const Group* a, const Group* b) { return ranks_before(a->stats.mean, b->stats.mean, r.goal); });
  const std::size_t total = ranked.size();
  if (ranked.size() > static_cast<std::size_t>(args.top)) ranked.resize(static_cast<std::size_t>(args.top));
  const bool table = format == Format::Table;
  if (table)
    std::cout << "top " << ranked.size() << " of " << total << " configurations (" << with_key << " runs with "
              << args.metric << "), by the mean over seeds of each run's " << r.what << " value, "
              << better_word(r.goal) << " is better; std over seeds (n - 1)\n";
  writer.header({"rank", "experiment", "configuration", "n", "mean", "std", "runs"});
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const Group& group = *ranked[i];
    std::string ids;
    for (const auto id : group.ids) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    const double std_value = group.stats.n > 1 ? group.stats.std : std::nan("");
    writer.row({integer_cell(static_cast<std::int64_t>(i + 1)), text_cell(group.first->experiment),
                text_cell(storage::configuration_label(*group.first)), integer_cell(static_cast<std::int64_t>(group.stats.n)),
                table ? text_cell(metric_text(args.metric, group.stats.mean)) : optional_real(group.stats.mean),
                table ? text_cell(group.stats.n > 1 ? metric_text(args.metric, std_value) : "-")
                      : optional_real(std_value),
                text_cell(ids)});
  }
}

// Runs ranked by their values.
void rank_runs(const BestArgs& args, const Ranking& r, const std::vector<storage::RunRow>& runs,
               const ValuesByRun& values, std::size_t with_key, RowWriter& writer, Format format) {
  struct Ranked {
    const storage::RunRow* run;
    double value;
  };
  std::vector<Ranked> ranked;
  for (const auto& run : runs) {
    const auto it = values.find(run.id);
    if (it != values.end()) ranked.push_back({&run, figure_of(it->second, r.value)});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const Ranked& a, const Ranked& b) { return ranks_before(a.value, b.value, r.goal); });
  if (ranked.size() > static_cast<std::size_t>(args.top)) ranked.resize(static_cast<std::size_t>(args.top));
  if (format == Format::Table)
    std::cout << "top " << ranked.size() << " of " << with_key << " runs with " << args.metric << ", by its " << r.what
              << " value, " << better_word(r.goal) << " is better\n";
  writer.header({"rank", "id", "experiment", "run", "status", r.value == "last" ? args.metric : args.metric + ":" + r.value});
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& run = *ranked[i].run;
    writer.row(
        {integer_cell(static_cast<std::int64_t>(i + 1)), integer_cell(run.id), text_cell(run.experiment),
         text_cell(run.name), text_cell(run.status_label()),
         format == Format::Table ? text_cell(metric_text(args.metric, ranked[i].value)) : real_cell(ranked[i].value)});
  }
}

}  // namespace

int best_command(const BestArgs& args) {
  const Format format = parse_format(args.format);
  const Ranking ranking = ranking_of(args);
  auto db = open_for_reading(args.db);
  const auto runs = selected_runs(*db, args.experiment, args.status, args.where);
  require_key(*db, args.metric, args.experiment, "--metric");
  const auto values = storage::summaries_of_key(*db, args.metric);
  std::size_t with_key = 0;
  for (const auto& run : runs) with_key += values.count(run.id);
  RowWriter writer(std::cout, format);
  if (ranking.by == "configuration")
    rank_configurations(args, ranking, runs, values, with_key, writer, format);
  else
    rank_runs(args, ranking, runs, values, with_key, writer, format);
  writer.finish();
  return 0;
}

}  // namespace laconic::cli
