// laconic and laconic-engine: the command-line entry point (cli/CMakeLists.txt builds it twice).
// Parses flags, dispatches to the commands, and turns any
// error into one clear message and a non-zero exit status.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/annotate_commands.hpp"
#include "cli/catalog_commands.hpp"
#include "cli/inspect_commands.hpp"
#include "cli/merge_command.hpp"
#include "cli/pinned_threads.hpp"
#include "cli/query_commands.hpp"
#include "cli/recover_command.hpp"
#include "cli/run_command.hpp"
#include "cli/runs_command.hpp"
#include "cli/sql_commands.hpp"
#include "cli/version.hpp"
#include "cli/worker_command.hpp"
#include "engine/core/error.hpp"
#include "storage/database.hpp"

namespace {

#ifndef LACONIC_FRONT
// Signal handlers can only reach a global; this one flag is the controller's "stop" request.
std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop = true; }
#endif

std::string self_executable(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  return std::string(buf, static_cast<std::size_t>(n));
}

#ifdef LACONIC_FRONT
// Replaces this process by laconic-engine from the same directory, with the same arguments (and
// so the same pid: a controller's runs.controller_pid stays right). Returns only on failure.
int exec_engine(char** argv) {
  const std::string self = self_executable(argv[0]);
  const std::string engine = self.substr(0, self.rfind('/') + 1) + "laconic-engine";
  argv[0] = const_cast<char*>(engine.c_str());
  ::execv(engine.c_str(), argv);
  std::cerr << "laconic: cannot start " << engine << ": " << std::strerror(errno)
            << " (run, worker, check and list live in that binary, built next to laconic)\n";
  return 1;
}
#endif

#ifndef LACONIC_FRONT
// "compressors" and "topologies" name the same kinds as "compressor" and "topology".
std::string singular(std::string kind) {
  if (kind.size() > 3 && kind.ends_with("ies")) return kind.substr(0, kind.size() - 3) + "y";
  if (kind.size() > 1 && kind.ends_with("s")) return kind.substr(0, kind.size() - 1);
  return kind;
}
#endif

// CLI11's PositiveNumber says "Value 0 not in range 2.22507e-308 to 1.79769e+308".
const CLI::Validator kPositive(
    [](std::string& text) -> std::string {
      try {
        std::size_t used = 0;
        if (std::stod(text, &used) > 0 && used == text.size()) return "";
      } catch (const std::exception&) {
        // not a number: said below
      }
      return "must be a number greater than 0, got " + text;
    },
    "POSITIVE");

// An empty default ("" or an empty list) says nothing in --help; CLI11 would print "=[]".
void tidy_help_defaults(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_default_str().empty() || option->get_default_str() == "[]") option->default_str("");
  for (CLI::App* command : app.get_subcommands({})) tidy_help_defaults(*command);
}

// The command line parsed and the command run; returns the exit status.
int dispatch(int argc, char** argv) {
  CLI::App app{
      "laconic: a testbed for communication-efficient distributed deep learning.\n"
      "Experiments are Lua files; results go to a SQLite database."};
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  app.set_version_flag("--version", laconic::cli::version_text(),
                       "print laconic's version and git description, and the versions of LibTorch, Gloo, Lua and "
                       "SQLite, then exit");
  // Each command's --db has a variable of its own: CLI11 fills an option from LACONIC_DB in
  // commands that were not invoked too, and one shared variable let that override the --db of the
  // command that was (issue 29). After parsing, `db` is the invoked command's.
  std::map<const CLI::App*, std::string> db_of;
  auto add_db_option = [&db_of](CLI::App* command) {
    command->add_option("--db", db_of[command] = "laconic.db", "SQLite database of experiments, runs and metrics")
        ->envname("LACONIC_DB");
  };
  std::string db = "laconic.db";

  laconic::cli::RunArgs run_args;
  auto* run = app.add_subcommand("run", "train every run of an experiment file, recording to --db");
  run->add_option("file", run_args.file, "experiment file (.lua)")->required()->check(CLI::ExistingFile);
  run->add_flag("--resume", run_args.resume,
                "run only what is missing or unfinished: skip runs FINISHED with an identical "
                "configuration, continue unfinished ones from their newest checkpoint; refuses "
                "when the experiment file changed since it was recorded");
  run->add_flag("--force", run_args.force, "with --resume: go on even though the experiment file changed");
  run->add_option("--checkpoint-every", run_args.checkpoint_every,
                  "steps between checkpoints of each run (0 = none); kept next to the database in "
                  "DB.checkpoints/ until the run finishes")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--only", run_args.only, "run only the runs whose name contains this text (e.g. compressor=topk)");
  run->add_option("--shard", run_args.shard,
                  "I/N: run only share I (0 to N-1) of the selected runs, every N-th from the I-th in "
                  "plan order, for N machines that each record into their own database; gather them "
                  "with `laconic merge` (default: all)");
  run->add_option("--jobs,-j", run_args.jobs,
                  "runs at once on this host, each job on cores of its own (as many as its largest run has "
                  "ranks), all recording into the same database; refused when they need more cores than the "
                  "host has, unless --oversubscribe")
      ->check(kPositive);
  run->add_flag("--oversubscribe", run_args.oversubscribe,
                "with --jobs: allow more ranks than cores (the jobs then share cores, and their times measure "
                "each other)");
  run->add_option("--set", run_args.overrides,
                  "KEY=VALUE: change a field of the experiment for this run, checked as the file's own and "
                  "recorded in each run's configuration (epochs=1, workers=4, network.bandwidth=100Mbit, "
                  "optimizer.lr=0.1, compressor=topk, seeds=1,2,3); repeatable, applied in order")
      ->allow_extra_args(false);
  std::int64_t run_repeat = 0;
  run->add_option("--repeat", run_repeat,
                  "train every run N times with the same seed (runs_per_seed = N), to measure the noise in its "
                  "times; reports group the repeats")
      ->check(kPositive)
      ->default_str("");
  run->add_flag("--dry-run", run_args.dry_run,
                "validate and list the runs that would execute (as `check`), train nothing");
  run->add_flag("--quiet,-q", run_args.quiet, "no progress display; only a result line per run");
  run->add_option("--progress-every", run_args.progress_every,
                  "seconds between progress lines when standard output is not a terminal (a log); "
                  "a line is also printed at every evaluation")
      ->check(kPositive);
  laconic::cli::LaunchFlags launch_flags;
  bool single_host = false;
  run->add_option("--rank", launch_flags.rank,
                  "with --world and --store: this process is this rank of every run, the others started likewise "
                  "(on this or other hosts); rank 0 records into --db (docs/multi-host.md). Without them, the "
                  "variables of torchrun (RANK, WORLD_SIZE), mpirun (OMPI_COMM_WORLD_RANK/SIZE) or srun "
                  "(SLURM_PROCID/NTASKS), with MASTER_ADDR and MASTER_PORT, do the same")
      ->check(CLI::NonNegativeNumber)
      ->default_str("");
  run->add_option("--world", launch_flags.world, "with --rank: how many ranks were started")
      ->check(kPositive)
      ->default_str("");
  run->add_option("--store", launch_flags.store,
                  "with --rank: where the ranks meet: tcp://HOST:PORT (rank 0 serves it), redis://HOST:PORT, or "
                  "file:///DIR on a file system every rank sees");
  run->add_option("--launch-id", launch_flags.launch_id,
                  "what tells this launch's ranks from another's in a shared store (a Redis server): give every "
                  "rank of a launch the same (default: LACONIC_LAUNCH_ID, or the launcher's job: "
                  "TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID, PMIX_NAMESPACE)");
  run->add_option("--launch-timeout", run_args.launch_timeout,
                  "seconds the ranks of a launch wait for each other at the start")
      ->check(kPositive);
  run->add_flag("--single-host", single_host,
                "ignore a launcher's variables (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...): fork every run's "
                "workers on this host");
  run->add_option("--db-retry", run_args.db_retry,
                  "seconds the database may refuse writes (locked, disk full, unwritable) before the sweep stops "
                  "and what is pending goes to a recovery journal for `laconic recover`")
      ->check(CLI::NonNegativeNumber);
  add_db_option(run);

  laconic::cli::WorkerArgs worker_args;
  auto* worker = app.add_subcommand("worker", "one worker process of a run (started by `run`)");
  worker->group("");  // internal: hidden from --help
  worker->add_option("--file", worker_args.file)->required();
  worker->add_option("--file-hash", worker_args.file_hash);
  worker->add_option("--run-index", worker_args.run_index)->required();
  worker->add_option("--run-name", worker_args.run_name);
  worker->add_option("--set", worker_args.overrides)->allow_extra_args(false);
  worker->add_option("--rank", worker_args.rank)->required();
  worker->add_option("--world", worker_args.world)->required();
  worker->add_option("--store", worker_args.store)->required();
  worker->add_option("--store-prefix", worker_args.store_prefix);
  worker->add_option("--hostname", worker_args.hostname);
  worker->add_option("--interface", worker_args.interface);
  worker->add_option("--message-fd", worker_args.message_fd);
  worker->add_option("--checkpoint-dir", worker_args.checkpoint_dir);
  worker->add_option("--checkpoint-every", worker_args.checkpoint_every);
  worker->add_option("--resume-step", worker_args.resume_step);

  laconic::cli::RunsArgs runs_args;
  auto* runs = app.add_subcommand("runs", "list recorded runs (from run_summary; works while a sweep writes)");
  runs->add_option("--experiment", runs_args.experiment, "only runs of this experiment");
  runs->add_option("--status", runs_args.status,
                   "only runs with this status (QUEUED, RUNNING, FINISHED, FAILED, KILLED, DIVERGED; any case)");
  runs->add_option("--where", runs_args.where,
                   "KEY=VALUE (or !=, <, <=, >, >=) on a swept variable, config field or final metric, e.g. "
                   "compressor=topk, ratio=0.01, workers=4, optimizer.lr=0.1, 'test_accuracy>0.85'; numbers "
                   "compare numerically; repeat for AND")
      ->allow_extra_args(false);
  runs->add_option("--metric", runs_args.metrics,
                   "add a column per KEY or KEY:FIGURE (FIGURE: last, min, max, mean, sum; default last)")
      ->allow_extra_args(false);
  runs->add_flag("--wide", runs_args.wide,
                 "add test_loss, test_ppl, compression ratio, seed, attempts, host, oversubscribed, busy (the cores "
                 "the run's ranks and the host's other processes wanted: run_facts host_demand)");
  runs->add_option("--format", runs_args.format, "table, csv or json (csv and json carry every field)");
  runs->add_option("--tag", runs_args.tags, "only runs with this tag (laconic tag); repeat for AND")
      ->allow_extra_args(false);
  runs->add_flag("--watch", runs_args.watch,
                 "list again every --interval seconds, as a sweep writes, until Ctrl-C (or --times listings)");
  runs->add_option("--interval", runs_args.interval, "seconds between listings with --watch")->check(kPositive);
  runs->add_option("--times", runs_args.times, "with --watch: stop after this many listings (0 = until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  add_db_option(runs);

  std::int64_t show_run = 0;
  auto* show = app.add_subcommand("show", "one run in full: facts, swept variables, config, summary, per-epoch table");
  show->add_option("run", show_run, "run id (laconic runs lists them)")->required();
  std::string show_format = "table";
  show->add_option("--format", show_format, "table or json (one object: run fields, summary, epochs)");
  add_db_option(show);

  laconic::cli::CompareArgs compare_args;
  auto* compare =
      app.add_subcommand("compare", "runs side by side: config fields and final metrics, differences marked *");
  compare->add_option("runs", compare_args.runs, "two or more run ids")->required();
  compare->add_flag("--diff-only", compare_args.diff_only, "print only the rows whose values differ");
  compare->add_option("--format", compare_args.format, "table, csv or json");
  add_db_option(compare);

  std::string query_sql, query_format = "table";
  auto* query = app.add_subcommand("query", "run one read-only SQL statement on the database (docs/schema.md)");
  query->add_option("sql", query_sql, "one SELECT (or read-only PRAGMA); writes are refused")->required();
  query->add_option("--format", query_format, "table, csv or json");
  double query_timeout = 60;
  query->add_option("--timeout", query_timeout, "seconds the query may run before it is stopped (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  add_db_option(query);

  laconic::cli::ExportArgs export_args;
  auto* export_cmd = app.add_subcommand("export", "stream a table as CSV or JSON (NaN as nan / \"NaN\")");
  export_cmd->add_option("--format", export_args.format, "csv or json");
  export_cmd->add_option("--what", export_args.what, "runs, metrics or summary (run_summary rows)");
  export_cmd->add_option("--experiment", export_args.experiment, "only runs of this experiment");
  export_cmd->add_option("--run", export_args.runs, "only this run id; repeat for several")->allow_extra_args(false);
  export_cmd->add_option("--key", export_args.keys, "only this metric key; repeat for several")
      ->allow_extra_args(false);
  export_cmd->add_option("--out", export_args.out, "output file (default: standard output)");
  add_db_option(export_cmd);

  laconic::cli::BestArgs best_args;
  auto* best = app.add_subcommand("best", "rank runs, or configurations over their seeds, by one metric");
  best->add_option("--metric", best_args.metric, "metric key of run_summary");
  best->add_option("--experiment", best_args.experiment, "only runs of this experiment");
  best->add_option("--status", best_args.status, "only runs with this status");
  best->add_option("--where", best_args.where, "conditions, as for runs (KEY=VALUE, KEY>VALUE, ...)")
      ->allow_extra_args(false);
  best->add_option("--goal", best_args.goal,
                   "max or min (default: min for keys with loss, perplexity, time, bytes, staleness, lag or "
                   "distance in their name, else max)");
  best->add_option("--by", best_args.by,
                   "run: rank runs; configuration: rank configurations (runs alike but for the seed) by the "
                   "mean over their runs, with std and n");
  best->add_option("--value", best_args.value, "which value of each run: last (final), min, max or mean");
  best->add_option("--top", best_args.top, "how many runs to print");
  best->add_option("--format", best_args.format, "table, csv or json");
  add_db_option(best);

  laconic::cli::ReportArgs report_args;
  auto* report = app.add_subcommand(
      "report", "write a report comparing the runs of an experiment: index.html, report.md, CSV tables, figures");
  report
      ->add_option("experiments", report_args.experiments,
                   "experiment name; two or more compare their runs side by side (rows experiment=NAME)")
      ->required();
  report->add_option("--out", report_args.out,
                     "output directory (default: laconic-reports/EXPERIMENT, laconic-reports/A-vs-B for several)");
  report->add_option("--target", report_args.target,
                     "test-metric threshold of 'time to target' for every row (default: each row's best dense "
                     "configuration's mean final value less --tolerance)");
  report
      ->add_option("--tolerance", report_args.tolerance,
                   "how far below the best dense configuration the default target lies: points of accuracy "
                   "(0.5 = 0.005), or percent of perplexity (default: 0.5 points of accuracy, 2% of perplexity)")
      ->check(CLI::NonNegativeNumber)
      ->default_str("");
  report->add_option("--gnuplot", report_args.gnuplot, "gnuplot executable that draws the figures")
      ->envname("LACONIC_GNUPLOT");
  report->add_flag("--allow-missing-figures", report_args.allow_missing_figures,
                   "exit 0 even when a figure could not be drawn (otherwise exit 3)");
  report
      ->add_option("--link", report_args.links,
                   "also project every configuration onto this link: BANDWIDTH[,LATENCY[,OVERHEAD[,"
                   "HOST_BANDWIDTH]]] (\"100Mbit\", \"1Gbit,50us\", \"10Gbit,50us,340us,5.6Gbit\"; latency "
                   "default 50us, overhead 0, host bandwidth none; docs/network-model.md); repeatable "
                   "(default: none)")
      ->take_all()
      ->allow_extra_args(false);
  add_db_option(report);

  std::vector<std::string> tag_args;
  bool tag_remove = false;
  auto* tag = app.add_subcommand("tag", "tag runs (laconic runs --tag TAG lists them); never touches a metric");
  tag->add_option("runs_and_tag", tag_args,
                  "RUN... TAG: one or more run ids, then the tag (letters, digits, - _ . : + /)")
      ->required()
      ->expected(2, -1);
  tag->add_flag("--remove", tag_remove, "remove the tag from the runs instead");
  add_db_option(tag);

  std::int64_t note_run = 0;
  std::string note_text;
  auto* note = app.add_subcommand("note", "write a note on a run (laconic show prints it; \"\" clears it)");
  note->add_option("run", note_run, "run id")->required();
  note->add_option("text", note_text, "the note, quoted")->required();
  add_db_option(note);

  std::vector<std::string> recover_files;
  std::string recover_db;
  bool recover_damaged = false;
  auto* recover = app.add_subcommand(
      "recover",
      "replay a recovery journal (written when the database took no writes) into its database, once; or, with "
      "--from-damaged, copy what can be read of a damaged database into a new one");
  recover
      ->add_option("files", recover_files,
                   "JOURNAL: the journal file `laconic run` named; with --from-damaged: DAMAGED.db NEW.db")
      ->required()
      ->expected(1, 2);
  recover->add_flag("--from-damaged", recover_damaged,
                    "copy every row that can still be read of DAMAGED.db (refused by quick_check) into the new "
                    "file NEW.db, computing run_summary again; DAMAGED.db is only read");
  recover->add_option("--db", recover_db, "the database to replay into (default: the one the journal names)");

  std::string merge_target;
  std::vector<std::string> merge_sources;
  auto* merge =
      app.add_subcommand("merge", "gather the runs of other databases (the shards of a sweep, `run --shard`) into one");
  merge->add_option("target", merge_target, "the database to merge into (created when missing)")->required();
  merge->add_option("sources", merge_sources, "the databases to merge from, in order")->required();

  std::string list_kind;
  bool list_markdown = false;
  auto* list = app.add_subcommand("list", "list built-in components with their fields and defaults");
  list->add_option("kind", list_kind,
                   "dataset, model, optimizer, topology, schedule, compressor, network, lr_schedule or "
                   "stopping (default: all)");
  list->add_flag("--markdown", list_markdown,
                 "print the reference as Markdown tables (the generated part of docs/dsl.md)");

  std::string check_file, check_only;
  std::vector<std::string> check_overrides;
  bool check_names = false, check_json = false;
  auto* check = app.add_subcommand("check", "validate an experiment file and list its runs without training");
  check->add_option("file", check_file, "experiment file (.lua)")->required()->check(CLI::ExistingFile);
  check->add_option("--only", check_only, "list only the runs whose name contains this text");
  check->add_option("--set", check_overrides, "KEY=VALUE, as for run: check the experiment with this change")
      ->allow_extra_args(false);
  auto* names_flag = check->add_flag("--names", check_names, "print the run names only, one per line");
  check->add_flag("--json", check_json, "print each run's resolved configuration as JSON under its name")
      ->excludes(names_flag);

  tidy_help_defaults(app);

  // A bad flag is the user's error like any other: exit 2 (CLI11's own codes are 100 and up).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  for (const CLI::App* command : app.get_subcommands())
    if (const auto it = db_of.find(command); it != db_of.end()) db = it->second;
  try {
#ifdef LACONIC_FRONT
    // This binary does not link LibTorch, so the read commands start at once; the commands
    // that train or need the engine's catalog run in laconic-engine, with the same arguments.
    if (*run || *worker || *list || *check) {
      // A controller's workers are its forks: one thread each for OpenMP and BLAS, which size
      // their pools when LibTorch is loaded, before laconic-engine's main() (docs/architecture.md).
      if (*run)
        for (const char* name : laconic::cli::kPinnedThreadVariables) ::setenv(name, "1", 1);
      return exec_engine(argv);
    }
#else
    if (*run) {
      struct sigaction action {};
      action.sa_handler = request_stop;
      ::sigaction(SIGINT, &action, nullptr);
      ::sigaction(SIGTERM, &action, nullptr);
      if (run_repeat > 0) run_args.overrides.push_back("runs_per_seed=" + std::to_string(run_repeat));
      if (run_args.dry_run)
        return laconic::cli::check_command(run_args.file, run_args.only, laconic::cli::CheckListing::Summary,
                                           run_args.overrides);
      if (!single_host)
        run_args.launched = laconic::cli::detect_launch(laconic::cli::process_environment(), launch_flags);
      run_args.db = db;
      run_args.executable = self_executable(argv[0]);
      return laconic::cli::run_command(run_args, g_stop);
    }
    if (*worker) return laconic::cli::worker_command(worker_args);
    if (*list)
      return list_markdown ? laconic::cli::list_markdown_command()
                           : laconic::cli::list_command(list_kind.empty() ? "" : singular(list_kind));
    if (*check)
      return laconic::cli::check_command(check_file, check_only,
                                         check_names  ? laconic::cli::CheckListing::Names
                                         : check_json ? laconic::cli::CheckListing::Json
                                                      : laconic::cli::CheckListing::Summary,
                                         check_overrides);
#endif
    runs_args.db = compare_args.db = export_args.db = best_args.db = db;
    if (*runs) return laconic::cli::runs_command(runs_args);
    if (*show) return laconic::cli::show_command(db, show_run, show_format);
    if (*compare) return laconic::cli::compare_command(compare_args);
    if (*query) return laconic::cli::query_command(db, query_sql, query_format, query_timeout);
    if (*export_cmd) return laconic::cli::export_command(export_args);
    if (*best) return laconic::cli::best_command(best_args);
    if (*report) {
      report_args.db = db;
      return laconic::cli::report_command(report_args);
    }
    if (*recover) {
      if (recover_damaged != (recover_files.size() == 2))
        throw laconic::ConfigError(recover_damaged ? "laconic recover --from-damaged takes DAMAGED.db NEW.db"
                                                   : "laconic recover takes one JOURNAL (or --from-damaged "
                                                     "DAMAGED.db NEW.db)");
      if (recover_damaged) return laconic::cli::salvage_command(recover_files[0], recover_files[1]);
      if (!std::filesystem::is_regular_file(recover_files[0]))
        throw laconic::ConfigError("no journal file '" + recover_files[0] + "'");
      return laconic::cli::recover_command(recover_files[0], recover_db);
    }
    if (*tag) return laconic::cli::tag_command(db, tag_args, tag_remove);
    if (*note) return laconic::cli::note_command(db, note_run, note_text);
    if (*merge) return laconic::cli::merge_command(merge_target, merge_sources);
  } catch (const laconic::ConfigError& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 2;
  } catch (const laconic::StoppedError& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 130;
  } catch (const laconic::StorageError& e) {
    // The file, what went wrong in words and what to do; not the SQL that failed.
    const std::string database = *recover && !recover_db.empty() ? recover_db : *merge ? merge_target : db;
    std::cerr << "laconic: " << laconic::storage::explain_storage_error(e.code(), e.what(), database) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int status = dispatch(argc, argv);
#ifndef LACONIC_FRONT
  // LibTorch's static destructors deregister each of its thousands of operators, about 0.2 s at
  // every exit of laconic-engine. All of laconic's own resources (databases, files, namespaces,
  // worker processes) were released when dispatch() returned, so the engine leaves without them.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status);
#endif
  return status;
}
