// laconic: the command-line entry point. Parses flags, dispatches to the commands, and turns any
// error into one clear message and a non-zero exit status.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/catalog_commands.hpp"
#include "cli/query_commands.hpp"
#include "cli/run_command.hpp"
#include "cli/worker_command.hpp"
#include "engine/core/error.hpp"

namespace {

// Signal handlers can only reach a global; this one flag is the controller's "stop" request.
std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop = true; }

std::string self_executable(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  return std::string(buf, static_cast<std::size_t>(n));
}

// "compressors" and "topologies" name the same kinds as "compressor" and "topology".
std::string singular(std::string kind) {
  if (kind.size() > 3 && kind.ends_with("ies")) return kind.substr(0, kind.size() - 3) + "y";
  if (kind.size() > 1 && kind.ends_with("s")) return kind.substr(0, kind.size() - 1);
  return kind;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"laconic: a testbed for communication-efficient distributed deep learning.\n"
               "Experiments are Lua files; results go to a SQLite database."};
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  std::string db = "laconic.db";
  auto add_db_option = [&db](CLI::App* command) {
    command->add_option("--db", db, "SQLite database of experiments, runs and metrics")
        ->envname("LACONIC_DB");
  };

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
  run->add_option("--only", run_args.only,
                  "run only the runs whose name contains this text (e.g. compressor=topk)");
  run->add_flag("--dry-run", run_args.dry_run,
                "validate and list the runs that would execute (as `check`), train nothing");
  add_db_option(run);

  laconic::cli::WorkerArgs worker_args;
  auto* worker = app.add_subcommand("worker", "one worker process of a run (started by `run`)");
  worker->group("");  // internal: hidden from --help
  worker->add_option("--file", worker_args.file)->required();
  worker->add_option("--file-hash", worker_args.file_hash);
  worker->add_option("--run-index", worker_args.run_index)->required();
  worker->add_option("--run-name", worker_args.run_name);
  worker->add_option("--rank", worker_args.rank)->required();
  worker->add_option("--world", worker_args.world)->required();
  worker->add_option("--store", worker_args.store)->required();
  worker->add_option("--hostname", worker_args.hostname);
  worker->add_option("--message-fd", worker_args.message_fd);
  worker->add_option("--checkpoint-dir", worker_args.checkpoint_dir);
  worker->add_option("--checkpoint-every", worker_args.checkpoint_every);
  worker->add_option("--resume-step", worker_args.resume_step);

  std::optional<std::string> runs_experiment, runs_status;
  auto* runs = app.add_subcommand("runs", "list recorded runs");
  runs->add_option("--experiment", runs_experiment, "only runs of this experiment");
  runs->add_option("--status", runs_status,
                   "only runs with this status (QUEUED, RUNNING, FINISHED, FAILED, KILLED, DIVERGED)");
  add_db_option(runs);

  laconic::cli::ReportArgs report_args;
  auto* report = app.add_subcommand(
      "report", "write a report comparing the runs of an experiment: index.html, report.md, CSV tables, figures");
  report->add_option("experiment", report_args.experiment, "experiment name")->required();
  report->add_option("--out", report_args.out, "output directory (default: laconic-reports/EXPERIMENT)");
  report->add_option("--target", report_args.target,
                     "test-metric threshold of 'time and bytes to target' (default: the least good mean final "
                     "value among the configurations)");
  report->add_option("--gnuplot", report_args.gnuplot, "gnuplot executable that draws the figures")
      ->envname("LACONIC_GNUPLOT");
  add_db_option(report);

  std::string list_kind;
  bool list_markdown = false;
  auto* list = app.add_subcommand("list", "list built-in components with their fields and defaults");
  list->add_option("kind", list_kind,
                   "dataset, model, optimizer, topology, schedule, compressor, network or "
                   "lr_schedule (default: all)");
  list->add_flag("--markdown", list_markdown,
                 "print the reference as Markdown tables (the generated part of docs/dsl.md)");

  std::string check_file, check_only;
  auto* check = app.add_subcommand("check", "validate an experiment file and list its runs without training");
  check->add_option("file", check_file, "experiment file (.lua)")->required()->check(CLI::ExistingFile);
  check->add_option("--only", check_only, "list only the runs whose name contains this text");

  CLI11_PARSE(app, argc, argv);

  try {
    if (*run) {
      struct sigaction action {};
      action.sa_handler = request_stop;
      ::sigaction(SIGINT, &action, nullptr);
      ::sigaction(SIGTERM, &action, nullptr);
      if (run_args.dry_run) return laconic::cli::check_command(run_args.file, run_args.only);
      run_args.db = db;
      run_args.executable = self_executable(argv[0]);
      return laconic::cli::run_command(run_args, g_stop);
    }
    if (*worker) return laconic::cli::worker_command(worker_args);
    if (*runs) return laconic::cli::runs_command(db, runs_experiment, runs_status);
    if (*report) {
      report_args.db = db;
      return laconic::cli::report_command(report_args);
    }
    if (*list)
      return list_markdown ? laconic::cli::list_markdown_command()
                           : laconic::cli::list_command(list_kind.empty() ? "" : singular(list_kind));
    if (*check) return laconic::cli::check_command(check_file, check_only);
  } catch (const laconic::ConfigError& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
