#include "cli/engine_command_line.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "engine/core/error.hpp"

namespace laconic::cli {
namespace {

/// The experiment file must open; the message is the loader's own (docs/dsl.md).
CLI::Validator openable_experiment() {
  return CLI::Validator(
      [](const std::string& path) {
        if (std::ifstream(path)) return std::string();
        return str_cat("cannot open experiment file '", path, "': ", std::strerror(errno));
      },
      "FILE");
}

void add_run_options(CLI::App* run, controller::SweepOptions& args) {
  run->add_option("file", args.file, "experiment file (.lua)")->required()->check(openable_experiment());
  run->add_flag("--resume", args.resume,
                "run only what is missing or unfinished: skip runs FINISHED with an identical "
                "configuration, continue unfinished ones from their newest checkpoint; refuses "
                "when the experiment file changed since it was recorded");
  run->add_flag("--force", args.force, "with --resume: go on even though the experiment file changed");
  run->add_option("--checkpoint-every", args.checkpoint_every,
                  "steps between checkpoints of each run (0 = none); kept next to the database in "
                  "DB.checkpoints/ until the run finishes")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--only", args.only, "run only the runs whose name contains this text (e.g. compressor=topk)");
  run->add_option("--shard", args.shard,
                  "I/N: run only share I (0 to N-1) of the selected runs, every N-th from the I-th in "
                  "plan order, for N machines that each record into their own database; gather them "
                  "with `laconic merge` (default: all)");
  run->add_option("--jobs,-j", args.jobs,
                  "runs at once on this host, each job on cores of its own (as many as its largest run has "
                  "ranks), all recording into the same database; refused when they need more cores than the "
                  "host has, unless --oversubscribe")
      ->check(positive());
  run->add_flag("--oversubscribe", args.oversubscribe,
                "with --jobs: allow more ranks than cores (the jobs then share cores, and their times measure "
                "each other)");
  run->add_option("--set", args.overrides,
                  "KEY=VALUE: change a field of the experiment for this run, checked as the file's own and "
                  "recorded in each run's configuration (epochs=1, workers=4, network.bandwidth=100Mbit, "
                  "optimizer.lr=0.1, compressor=topk, seeds=1,2,3); repeatable, applied in order")
      ->allow_extra_args(false);
  run->add_flag("--dry-run", args.dry_run, "validate and list the runs that would execute (as `check`), train nothing");
  run->add_flag("--quiet,-q", args.quiet, "no progress display; only a result line per run");
  run->add_option("--progress-every", args.progress_every,
                  "seconds between progress lines when standard output is not a terminal (a log); "
                  "a line is also printed at every evaluation")
      ->check(positive());
  run->add_option("--launch-timeout", args.launch_timeout,
                  "seconds the ranks of a launch wait for each other at the start")
      ->check(positive());
  run->add_option("--db-retry", args.db_retry,
                  "seconds the database may refuse writes (locked, disk full, unwritable) before the sweep stops "
                  "and what is pending goes to a recovery journal for `laconic recover`")
      ->check(CLI::NonNegativeNumber);
  add_db_option(run, args.db);
}

void add_launch_options(CLI::App* run, RunCommandLine& line) {
  run->add_option("--repeat", line.repeat,
                  "train every run N times with the same seed (runs_per_seed = N), to measure the noise in its "
                  "times; reports group the repeats")
      ->check(positive())
      ->default_str("");
  run->add_option("--rank", line.launch.rank,
                  "with --world and --store: this process is this rank of every run, the others started likewise "
                  "(on this or other hosts); rank 0 records into --db (docs/multi-host.md). Without them, the "
                  "variables of torchrun (RANK, WORLD_SIZE), mpirun (OMPI_COMM_WORLD_RANK/SIZE) or srun "
                  "(SLURM_PROCID/NTASKS), with MASTER_ADDR and MASTER_PORT, do the same")
      ->check(CLI::NonNegativeNumber)
      ->default_str("");
  run->add_option("--world", line.launch.world, "with --rank: how many ranks were started")
      ->check(positive())
      ->default_str("");
  run->add_option("--store", line.launch.store,
                  "with --rank: where the ranks meet: tcp://HOST:PORT (rank 0 serves it), redis://HOST:PORT, or "
                  "file:///DIR on a file system every rank sees");
  run->add_option("--launch-id", line.launch.launch_id,
                  "what tells this launch's ranks from another's in a shared store (a Redis server): give every "
                  "rank of a launch the same (default: LACONIC_LAUNCH_ID, or the launcher's job: "
                  "TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID, PMIX_NAMESPACE)");
  run->add_flag("--single-host", line.single_host,
                "ignore a launcher's variables (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...): fork every run's "
                "workers on this host");
}

}  // namespace

void add_run_commands(CLI::App& app, Commands& commands, const EngineCommands& engine) {
  auto* run = app.add_subcommand("run", "train every run of an experiment file, recording to --db");
  auto line = std::make_shared<RunCommandLine>();
  add_run_options(run, line->run);
  add_launch_options(run, *line);
  commands.push_back({run, [line, engine] { return engine.run(*line); }, [line] { return line->run.db; }});

  auto* worker = app.add_subcommand("worker", "one worker process of a run (started by `run`)");
  worker->group("");  // internal: hidden from --help
  auto worker_args = std::make_shared<controller::WorkerArgs>();
  controller::add_worker_options(*worker, *worker_args);
  commands.push_back({worker, [worker_args, engine] { return engine.worker(*worker_args); }});
}

void add_advise_command(CLI::App& app, Commands& commands, const EngineCommands& engine) {
  auto* advise = app.add_subcommand(
      "advise", "which of an experiment's candidates reaches the target soonest at N workers on a link, and how sure "
                "that is: probe runs at N workers, then a ranked table (docs/advise.md)");
  auto args = std::make_shared<advise::AdviseOptions>();
  advise->add_option("file", args->file, "experiment file (.lua) whose sweep lists the candidates, the baseline first")
      ->required()
      ->check(openable_experiment());
  advise->add_option("--workers", args->workers, "workers to advise for; the probes train this many")
      ->required()
      ->check(positive())
      ->default_str("");
  advise->add_option("--link", args->link,
                     "BANDWIDTH[,LATENCY[,OVERHEAD[,HOST_BANDWIDTH]]] to advise for (\"1Gbit\", \"100Mbit,1ms\"); "
                     "the probes' messages are projected onto it")
      ->required();
  advise->add_option("--hardware", args->hardware,
                     "a hardware profile (JSON, docs/hardware.md) to project the steps onto (compute and codec costs "
                     "there); default: the experiment's own hardware field, else the steps as probed on this machine");
  advise->add_option("--budget", args->budget,
                     "wall time the probes may take (\"15min\", \"600s\"); probes not finished by then are left out")
      ->capture_default_str();
  advise->add_option("--target", args->target,
                     "the test metric's target (default: the baseline's final value, less 0.5 points of accuracy)")
      ->default_str("");
  advise->add_option("--placement", args->placement,
                     "where the probes' ranks live: threads (any number of workers on this host, timed on CPU time), "
                     "processes (timed as full runs are), or auto: processes where the host has a core per worker")
      ->capture_default_str();
  advise->add_option("--seeds", args->seeds,
                     "probe runs per candidate (seeds 1 to N, trained seed by seed): with 2 or more, each time to "
                     "the target has its interval over seeds and the host's noise is averaged; 1 takes a third of "
                     "the time")
      ->check(positive())
      ->capture_default_str();
  advise->add_option("--evaluations", args->evaluations,
                     "evaluations over each probe (sets eval_every): the points of the learning curve a candidate's "
                     "steps to the target are extrapolated from when its probe does not reach it")
      ->check(positive())
      ->capture_default_str();
  advise->add_option("--set", args->overrides, "KEY=VALUE, as for run, applied before advise's own")
      ->allow_extra_args(false);
  advise->add_flag("--quiet,-q", args->quiet, "no progress display while the probes train");
  advise->add_option("--check", args->check,
                     "EXPERIMENT: train no probe; set the advice from those recorded against the finished runs of "
                     "EXPERIMENT (the same candidates trained in full, e.g. on an emulated link): steps and times to "
                     "the target predicted and measured, and the regret of following the advice");
  advise->add_option("--json", args->check_json,
                     "FILE: with --check, also write the comparison (every candidate's predicted and measured rank, "
                     "step and time to the target; the regrets) as JSON to FILE");
  add_db_option(advise, args->db);
  commands.push_back({advise, [args, engine] { return engine.advise(*args); }, [args] { return args->db; }});
}

void add_catalog_commands(CLI::App& app, Commands& commands, const EngineCommands& engine) {
  auto* list = app.add_subcommand("list", "list built-in components with their fields and defaults");
  auto list_args = std::make_shared<ListArgs>();
  list->add_option("kind", list_args->kind,
                   "dataset, model, optimizer, topology, schedule, compressor, network, lr_schedule, "
                   "stopping, placement or hardware (default: all)");
  list->add_flag("--markdown", list_args->markdown,
                 "print the reference as Markdown tables (the generated part of docs/dsl.md)");
  commands.push_back({list, [list_args, engine] { return engine.list(*list_args); }});

  auto* check = app.add_subcommand("check", "validate an experiment file and list its runs without training");
  auto check_args = std::make_shared<CheckArgs>();
  check->add_option("file", check_args->file, "experiment file (.lua)")->required()->check(openable_experiment());
  check->add_option("--db", check_args->db,
                    "mark the runs this database already holds FINISHED with the same configuration (what run "
                    "--resume --db PATH skips); none by default: check reads no database");
  check->add_option("--only", check_args->only, "list only the runs whose name contains this text");
  check->add_option("--set", check_args->overrides, "KEY=VALUE, as for run: check the experiment with this change")
      ->allow_extra_args(false);
  auto* names = check->add_flag_function(
      "--names", [check_args](std::int64_t) { check_args->listing = CheckListing::Names; },
      "print the run names only, one per line");
  check
      ->add_flag_function(
          "--json", [check_args](std::int64_t) { check_args->listing = CheckListing::Json; },
          "print each run's resolved configuration as JSON under its name")
      ->excludes(names);
  commands.push_back({check, [check_args, engine] { return engine.check(*check_args); }});
}

}  // namespace laconic::cli
