// The commands that read results, each declared with its options and handler (cli/command_line.hpp).
#include <filesystem>
#include <memory>

#include "cli/annotate_commands.hpp"
#include "cli/command_line.hpp"
#include "cli/inspect_commands.hpp"
#include "cli/merge_command.hpp"
#include "cli/query_commands.hpp"
#include "cli/recover_command.hpp"
#include "cli/runs_command.hpp"
#include "cli/sql_commands.hpp"
#include "cli/ui_command.hpp"
#include "engine/core/error.hpp"

namespace laconic::cli {
namespace {

// A command whose options fill an `Args` kept as long as the command line.
template <class Args>
std::shared_ptr<Args> args_for(Commands& commands, CLI::App* app, std::function<int(const Args&)> run) {
  auto args = std::make_shared<Args>();
  commands.push_back({app, [args, run] { return run(*args); }, [args] { return args->db; }});
  return args;
}

void add_runs(CLI::App& app, Commands& commands) {
  auto* runs = app.add_subcommand("runs", "list recorded runs (from run_summary; works while a sweep writes)");
  auto args = args_for<RunsArgs>(commands, runs, runs_command);
  runs->add_option("--experiment", args->experiment, "only runs of this experiment");
  runs->add_option("--status", args->status,
                   "only runs with this status (QUEUED, RUNNING, FINISHED, FAILED, KILLED, DIVERGED; any case)");
  runs->add_option("--where", args->where,
                   "KEY=VALUE (or !=, <, <=, >, >=) on a swept variable, config field or final metric, e.g. "
                   "compressor=topk, ratio=0.01, workers=4, optimizer.lr=0.1, 'test_accuracy>0.85'; numbers "
                   "compare numerically; repeat for AND")
      ->allow_extra_args(false);
  runs->add_option("--metric", args->metrics,
                   "add a column per KEY or KEY:FIGURE (FIGURE: last, min, max, mean, sum; default last)")
      ->allow_extra_args(false);
  runs->add_flag("--wide", args->wide,
                 "add test_loss, test_ppl, compression ratio, seed, attempts, host, oversubscribed, busy (the cores "
                 "the run's ranks and the host's other processes wanted: run_facts host_demand)");
  runs->add_option("--format", args->format, "table, csv or json (csv and json carry every field)");
  runs->add_option("--tag", args->tags, "only runs with this tag (laconic tag); repeat for AND")
      ->allow_extra_args(false);
  runs->add_flag("--watch", args->watch,
                 "list again every --interval seconds, as a sweep writes, until Ctrl-C (or --times listings)");
  runs->add_option("--interval", args->interval, "seconds between listings with --watch")->check(positive());
  runs->add_option("--times", args->times, "with --watch: stop after this many listings (0 = until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  add_db_option(runs, args->db);
}

struct ShowArgs {
  std::string db;
  std::int64_t run = 0;
  std::string format = "table";
};

void add_show(CLI::App& app, Commands& commands) {
  auto* show = app.add_subcommand("show", "one run in full: facts, swept variables, config, summary, per-epoch table");
  auto args = args_for<ShowArgs>(commands, show, [](const ShowArgs& a) { return show_command(a.db, a.run, a.format); });
  show->add_option("run", args->run, "run id (laconic runs lists them)")->required();
  show->add_option("--format", args->format, "table or json (one object: run fields, summary, epochs)");
  add_db_option(show, args->db);
}

void add_compare(CLI::App& app, Commands& commands) {
  auto* compare =
      app.add_subcommand("compare", "runs side by side: config fields and final metrics, differences marked *");
  auto args = args_for<CompareArgs>(commands, compare, compare_command);
  compare->add_option("runs", args->runs, "two or more run ids")->required();
  compare->add_flag("--diff-only", args->diff_only, "print only the rows whose values differ");
  compare->add_option("--format", args->format, "table, csv or json");
  add_db_option(compare, args->db);
}

struct QueryArgs {
  QueryOptions query;
  std::string db;
};

void add_query(CLI::App& app, Commands& commands) {
  auto* query = app.add_subcommand("query", "run one read-only SQL statement on the database (docs/schema.md)");
  auto args = args_for<QueryArgs>(commands, query, [](const QueryArgs& a) { return query_command(a.db, a.query); });
  query->add_option("sql", args->query.sql, "one SELECT (or read-only PRAGMA); writes are refused");
  query->add_option("--file", args->query.file,
                    "read the statement from FILE instead (\"-\": standard input), for one longer than a command line")
      ->excludes(query->get_option("sql"));
  query->add_option("--format", args->query.format, "table, csv or json")->capture_default_str();
  query->add_option("--timeout", args->query.timeout, "seconds the query may run before it is stopped (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  query->add_option("--max-bytes", args->query.max_bytes,
                    "bytes the result may hold, one value and all rows together, before the query is stopped")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_db_option(query, args->db);
}

void add_export(CLI::App& app, Commands& commands) {
  auto* export_cmd = app.add_subcommand("export", "stream a table as CSV or JSON (NaN as nan / \"NaN\")");
  auto args = args_for<ExportArgs>(commands, export_cmd, export_command);
  export_cmd->add_option("--format", args->format, "csv or json");
  export_cmd->add_option("--what", args->what, "runs, metrics or summary (run_summary rows)");
  export_cmd->add_option("--experiment", args->experiment, "only runs of this experiment");
  export_cmd->add_option("--run", args->runs, "only this run id; repeat for several")->allow_extra_args(false);
  export_cmd->add_option("--key", args->keys, "only this metric key; repeat for several")->allow_extra_args(false);
  export_cmd->add_option("--out", args->out, "output file (default: standard output)");
  add_db_option(export_cmd, args->db);
}

void add_best(CLI::App& app, Commands& commands) {
  auto* best = app.add_subcommand("best", "rank runs, or configurations over their seeds, by one metric");
  auto args = args_for<BestArgs>(commands, best, best_command);
  best->add_option("--metric", args->metric, "metric key of run_summary");
  best->add_option("--experiment", args->experiment, "only runs of this experiment");
  best->add_option("--status", args->status, "only runs with this status");
  best->add_option("--where", args->where, "conditions, as for runs (KEY=VALUE, KEY>VALUE, ...)")
      ->allow_extra_args(false);
  best->add_option("--goal", args->goal,
                   "max or min (default: min for keys with loss, perplexity, time, bytes, staleness, lag or "
                   "distance in their name, else max)");
  best->add_option("--by", args->by,
                   "run: rank runs; configuration: rank configurations (runs alike but for the seed) by the "
                   "mean over their runs, with std and n");
  best->add_option("--value", args->value, "which value of each run: last (final), min, max, mean or sum");
  best->add_option("--top", args->top, "how many runs to print");
  best->add_option("--format", args->format, "table, csv or json");
  add_db_option(best, args->db);
}

void add_report(CLI::App& app, Commands& commands) {
  auto* report = app.add_subcommand(
      "report", "write a report comparing the runs of an experiment: index.html, report.md, CSV tables, figures");
  auto args = args_for<ReportArgs>(commands, report, report_command);
  report
      ->add_option("experiments", args->experiments,
                   "experiment name; two or more compare their runs side by side (rows experiment=NAME)")
      ->required();
  report->add_option("--out", args->out,
                     "output directory (default: laconic-reports/EXPERIMENT, laconic-reports/A-vs-B for several)");
  report->add_option("--target", args->target,
                     "test-metric threshold of 'time to target' for every row (default: each row's baseline's mean "
                     "final value less --tolerance)");
  report->add_option("--baseline", args->baseline,
                     "the configuration every other is judged against, by its compressor as the report's tables "
                     "name it (\"fp16\", \"topk ratio=0.01\") (default: the baseline the runs recorded, "
                     "baseline = ... in the experiment, none() when it names none)");
  report
      ->add_option("--tolerance", args->tolerance,
                   "how far below the baseline the default target lies: points of accuracy "
                   "(0.5 = 0.005), or percent of perplexity (default: 0.5 points of accuracy, 2% of perplexity)")
      ->check(CLI::NonNegativeNumber)
      ->default_str("");
  report->add_option("--gnuplot", args->gnuplot, "gnuplot executable that draws the figures")
      ->envname("LACONIC_GNUPLOT");
  report->add_flag("--allow-missing-figures", args->allow_missing_figures,
                   "exit 0 even when a figure could not be drawn (otherwise exit 3)");
  report
      ->add_option("--link", args->links,
                   "also project every configuration onto this link: BANDWIDTH[,LATENCY[,OVERHEAD[,"
                   "HOST_BANDWIDTH]]] (\"100Mbit\", \"1Gbit,50us\", \"10Gbit,50us,340us,5.6Gbit\"; latency "
                   "default 50us, overhead 0, host bandwidth none; docs/network-model.md); repeatable "
                   "(default: none)")
      ->take_all()
      ->allow_extra_args(false);
  report->add_option("--hardware", args->hardware,
                     "also project every configuration onto the hardware of this profile (a JSON file written by "
                     "scripts/profile-hardware.py or by hand; docs/hardware.md): its compute and compression "
                     "costs, the runs' messages on each link (default: none)");
  add_db_option(report, args->db);
}

struct TagArgs {
  std::string db;
  std::vector<std::string> runs_and_tag;
  bool remove = false;
};

void add_tag(CLI::App& app, Commands& commands) {
  auto* tag = app.add_subcommand("tag", "tag runs (laconic runs --tag TAG lists them); never touches a metric");
  auto args = args_for<TagArgs>(commands, tag,
                                [](const TagArgs& a) { return tag_command(a.db, a.runs_and_tag, a.remove); });
  tag->add_option("runs_and_tag", args->runs_and_tag,
                  "RUN... TAG: one or more run ids, then the tag (letters, digits, - _ . : + /)")
      ->required()
      ->expected(2, -1);
  tag->add_flag("--remove", args->remove, "remove the tag from the runs instead");
  add_db_option(tag, args->db);
}

struct NoteArgs {
  std::string db;
  std::int64_t run = 0;
  std::string text;
};

void add_note(CLI::App& app, Commands& commands) {
  auto* note = app.add_subcommand("note", "write a note on a run (laconic show prints it; \"\" clears it)");
  auto args = args_for<NoteArgs>(commands, note, [](const NoteArgs& a) { return note_command(a.db, a.run, a.text); });
  note->add_option("run", args->run, "run id")->required();
  note->add_option("text", args->text, "the note, quoted")->required();
  add_db_option(note, args->db);
}

struct RecoverArgs {
  std::vector<std::string> files;
  std::string db;  ///< "" = the one the journal names
  bool damaged = false;
};

int recover(const RecoverArgs& args) {
  if (args.damaged != (args.files.size() == 2))
    throw ConfigError(args.damaged ? "laconic recover --from-damaged takes DAMAGED.db NEW.db"
                                   : "laconic recover takes one JOURNAL (or --from-damaged DAMAGED.db NEW.db)");
  if (args.damaged) return salvage_command(args.files[0], args.files[1]);
  if (!std::filesystem::is_regular_file(args.files[0])) throw ConfigError("no journal file '" + args.files[0] + "'");
  return recover_command(args.files[0], args.db);
}

void add_recover(CLI::App& app, Commands& commands) {
  auto* command = app.add_subcommand(
      "recover",
      "replay a recovery journal (written when the database took no writes) into its database, once; or, with "
      "--from-damaged, copy what can be read of a damaged database into a new one");
  auto args = std::make_shared<RecoverArgs>();
  commands.push_back({command, [args] { return recover(*args); },
                      [args] { return args->db.empty() ? std::string("laconic.db") : args->db; }});
  command
      ->add_option("files", args->files,
                   "JOURNAL: the journal file `laconic run` named; with --from-damaged: DAMAGED.db NEW.db")
      ->required()
      ->expected(1, 2);
  command->add_flag("--from-damaged", args->damaged,
                    "copy every row that can still be read of DAMAGED.db (refused by quick_check) into the new "
                    "file NEW.db, computing run_summary again; DAMAGED.db is only read");
  command->add_option("--db", args->db, "the database to replay into (default: the one the journal names)");
}

struct MergeArgs {
  std::string db;  ///< the target
  std::vector<std::string> sources;
};

void add_merge(CLI::App& app, Commands& commands) {
  auto* merge =
      app.add_subcommand("merge", "gather the runs of other databases (the shards of a sweep, `run --shard`) into one");
  auto args =
      args_for<MergeArgs>(commands, merge, [](const MergeArgs& a) { return merge_command(a.db, a.sources); });
  merge->add_option("target", args->db, "the database to merge into (created when missing)")->required();
  merge->add_option("sources", args->sources, "the databases to merge from, in order")->required();
}

void add_ui(CLI::App& app, Commands& commands) {
  auto* command = app.add_subcommand(
      "ui", "explore the runs in a browser, live while a sweep writes: a local web server over --db, read-only");
  auto options = std::make_shared<ui::UiOptions>();
  commands.push_back({command, [options] { return ui_command(*options); }, [options] { return options->db; }});
  command->add_option("--port", options->port, "the port it listens on; 0 picks a free one (the URL says which)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--host", options->host,
                      "the address it listens on: 127.0.0.1 is this machine only; 0.0.0.0 every interface (anyone "
                      "who can reach the machine reads the database)");
  add_db_option(command, options->db);
}

}  // namespace

void add_read_commands(CLI::App& app, Commands& commands) {
  add_runs(app, commands);
  add_show(app, commands);
  add_compare(app, commands);
  add_query(app, commands);
  add_export(app, commands);
  add_best(app, commands);
  add_report(app, commands);
  add_tag(app, commands);
  add_note(app, commands);
  add_recover(app, commands);
  add_merge(app, commands);
  add_ui(app, commands);
}

}  // namespace laconic::cli
