#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "controller/launch_environment.hpp"
#include "engine/core/run_config.hpp"

namespace laconic::controller {

struct SweepOptions {
  std::string file;                    ///< experiment file
  std::vector<std::string> overrides;  ///< --set KEY=VALUE (and --repeat N as runs_per_seed=N), in order
  std::string db = "laconic.db";       ///< SQLite database
  bool resume = false;                 ///< run only what is missing or unfinished (see run_sweep)
  bool force = false;                  ///< with resume: accept an experiment file that changed
  std::int64_t checkpoint_every = 0;   ///< steps between checkpoints; 0 = none
  std::string only;                    ///< run only runs whose name contains this (empty: all)
  std::string shard;                   ///< "I/N": run only share I of N of the selected runs (empty: all)
  int jobs = 1;                        ///< runs at once, each job on cores of its own
  bool oversubscribe = false;          ///< with jobs: allow more ranks than cores
  /// Set in each job's process: its share of the runs (job_index of jobs), whole progress lines.
  int job_index = -1;
  bool dry_run = false;    ///< list what would run, as `check`, and stop
  std::string executable;  ///< this binary, started again as `laconic worker`
  bool quiet = false;      ///< no progress display (result lines still printed)
  /// Seconds one outage of the database (locked, full, unwritable) may last before the sweep
  /// stops and what is pending goes to a recovery journal.
  double db_retry = 600;
  double progress_every = 30;  ///< seconds between progress lines when stdout is not a terminal
  /// Set when a launcher (torchrun, srun, mpirun) or --rank/--world/--store made this process
  /// one rank of every run (controller/launched_sweep.hpp); rank 0 records, the others follow it.
  std::optional<LaunchedRank> launched;
  /// Seconds the ranks of a launch wait for each other when they start (the store, rank 0, every
  /// rank's hello).
  double launch_timeout = 300;
  /// What a stop is recorded as (a run's error; the sweep's last line): the user's, or whoever
  /// else sets `stop` (laconic advise's budget).
  std::string stop_reason = "stopped by the user (Ctrl-C or SIGTERM)";
  /// After a stop, print the command that continues the sweep (resume_command); off for
  /// laconic advise, which continues its probes itself when asked again.
  bool resume_hint = true;
  /// Asked every second while a run trains, with its id: a non-empty reason ends it early, as
  /// a result (FINISHED, with the reason as its fact `dropped`): laconic advise's successive
  /// halving. Empty: never.
  std::function<std::string(std::int64_t run_id)> drop_check;
  /// The order to train in: runs with a lower key first, equal keys in the plan's order. laconic
  /// advise interleaves its probes' seeds (every candidate's first seed, then every second: the
  /// host's drift lands on every candidate alike) and trains the baseline's first in each round,
  /// since its early dropping measures the others against them. Empty: the plan's order.
  std::function<std::int64_t(const RunConfig&)> train_order;
};

/// `laconic run`: loads the experiment (nothing is recorded if it does not load), records its
/// runs as QUEUED, then runs them one after another. Returns 0 when every run finished (or
/// diverged: that is a result), 1 when one failed or the database took no writes for
/// `db_retry` seconds (a recovery journal was written), 130 when interrupted by `stop`.
/// With `resume`: a run FINISHED or DIVERGED (a result too) with the same configuration is
/// skipped; an unfinished one (FAILED, KILLED, QUEUED, or RUNNING with a dead controller, which
/// is first marked FAILED) continues in place, under its id: from its newest checkpoint when
/// every worker's file is there, else from the start with its rows cleared; one RUNNING under a
/// live controller is left alone, and so is one another controller claims first. Refused
/// (ConfigError) when the experiment was recorded before but never from a file with today's
/// hash, unless `force`.
/// Before that: removes the rendezvous directories of dead controllers, refuses a damaged
/// existing database (PRAGMA quick_check), and with `resume` replays its recovery journals.
/// With `jobs` > 1: forks that many controllers, each pinned to cores of its own (as many as the
/// largest run has ranks; ConfigError when they are more than the host's cores, unless
/// `oversubscribe`), each running every jobs-th run into the same database; returns the worst
/// of their statuses.
int run_sweep(const SweepOptions& args, const std::atomic<bool>& stop);

/// The command that continues this sweep where it stopped: `laconic run --resume FILE`, its
/// `--set` flags in order, `--only`, `--shard` and `--db` as given, each quoted for a POSIX shell
/// where it needs it.
std::string resume_command(const SweepOptions& args);

}  // namespace laconic::controller
