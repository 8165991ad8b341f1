#pragma once
// Starts the worker processes of one run, relays what they report, and decides how the run ended.
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "controller/pinned_threads.hpp"
#include "controller/worker_args.hpp"
#include "engine/core/metrics.hpp"
#include "engine/core/worker_message.hpp"

namespace laconic::controller {

class RelayConnection;  // controller/rank_relay.hpp

/// Rank 0's view of the other ranks of a launched sweep (torchrun, srun, mpirun: each rank is a
/// process of its own, maybe on another host): a connection to each, on which it starts their
/// worker for a run and hears what the worker reports (controller/rank_relay.hpp).
struct RemoteRanks {
  std::vector<std::unique_ptr<RelayConnection>> connections;  ///< ranks 1 to world - 1, in order
  std::string lost;  ///< why a rank is gone ("" while all are there): no later run can start
};

/// What starts the worker processes of one run.
struct LaunchSpec {
  std::string executable;  ///< the laconic binary, for exec'd workers (`laconic worker ARGS`)
  /// What every rank is told (its launch order says how many ranks the run has and whether they
  /// are threads of one process); the launcher sets each one's rank and pipe, and the private
  /// rendezvous directory as its store unless `remote` is set.
  WorkerArgs worker;
  double timeout = 60;  ///< seconds; Gloo waits at most this long, the controller a bit more
  /// The run's error when `stop` ended it (SweepOptions::stop_reason).
  std::string interrupted = "stopped by the user (Ctrl-C or SIGTERM)";
  /// Per rank, before it starts: what else differs between ranks (an emulated link's network
  /// namespace, address and delay). May be empty.
  std::function<void(WorkerArgs&)> place{};
  /// When set, each worker is a fork of this process that calls it with its arguments and
  /// exits with what it returns: LibTorch, already loaded and initialized here, is not loaded
  /// again (about 0.8 s per worker), nor is the experiment file. When empty, each worker execs
  /// `executable worker ARGS`.
  std::function<int(const WorkerArgs&)> in_fork{};
  /// A launched sweep's other ranks: only rank 0 is forked here (`in_fork` is then required), and
  /// each remote rank is told to start its own worker. They meet under worker.order.store_prefix in
  /// worker.store, the launcher's store.
  RemoteRanks* remote = nullptr;
  /// An elastic run's (elastic = true): how many times each rank but 0 may be relaunched after
  /// its process died, the run going on meanwhile (engine/comm/elastic.hpp); 0: a worker that
  /// dies fails the run.
  int elastic_relaunches = 0;
};

/// The relaunches of each rank an elastic run allows.
inline constexpr int kElasticRelaunches = 3;

/// Seconds between rank 0's signs of life ("P") to the other ranks' laconic processes while a run
/// trains (controller/launched_sweep.hpp: they give up on a rank 0 silent for longer than
/// kRankZeroSilenceGraceSeconds past the run's timeout).
inline constexpr double kRankZeroPingSeconds = 2;

/// Seconds, past its run's timeout, a rank other than 0 waits for rank 0 to be heard from before
/// it stops, whatever the network does (a link down, rank 0's host frozen).
inline constexpr double kRankZeroSilenceGraceSeconds = 15;

/// How a run's workers ended, as the run's status will say it.
enum class LaunchEnding {
  Finished,     ///< every worker exited 0
  Diverged,     ///< a worker stopped because its training loss diverged
  Failed,       ///< a worker failed, hung or was lost
  Interrupted,  ///< the user stopped it (Ctrl-C / SIGTERM)
  Stopped,      ///< LaunchObserver::stop_reason stopped it (the database took no writes)
  Dropped,      ///< LaunchObserver::drop_reason ended it early (laconic advise: its probe fell behind)
};

struct LaunchOutcome {
  LaunchEnding ending = LaunchEnding::Failed;
  std::string stopped;  ///< why LaunchObserver::stop_reason stopped the run ("" if it did not)
  std::string dropped;  ///< why LaunchObserver::drop_reason ended it early ("" if it did not)
  std::string error;    ///< why, worker by worker, when it did not finish
  // Where the time outside rank 0's own phases went (run_facts seconds_*, docs/schema.md):
  double start_seconds = 0;     ///< from the fork to rank 0's first message (exec, loading libraries)
  double teardown_seconds = 0;  ///< from rank 0's last message until every worker was reaped
  double total_seconds = 0;     ///< from the first fork until every worker was reaped

  bool ok() const { return ending == LaunchEnding::Finished; }
};

/// Hooks for what arrives while the run is going.
struct LaunchObserver {
  std::function<void(const ProgressMessage&)> on_progress;  ///< rank 0's progress
  /// About every 5 s (heartbeat), with the longest time any running worker has been silent.
  std::function<void(double workers_silent_seconds)> on_tick;
  /// Every worker's checkpoint before `step` is on disk (and their earlier metrics went to the sink).
  std::function<void(std::int64_t step)> on_checkpoint;
  /// Rank 0 says how it computes (threads, BLAS library): a row of run_facts.
  std::function<void(const std::string& key, const std::string& value)> on_fact;
  /// Every loop (a few times a second): what the run waits on, once a running worker has sent
  /// nothing for kSilentAfterSeconds ("no word from worker 1 (b, 10.0.0.2) for 8 s (last heard
  /// during training)") or made no progress for kStalledAfterSeconds; else "".
  std::function<void(const std::string& waiting_on)> on_wait;
  /// Asked every loop: a non-empty reason stops the workers as Ctrl-C would (the database could
  /// not take writes for too long), and becomes LaunchOutcome::stopped.
  std::function<std::string()> stop_reason;
  /// Asked every second: a non-empty reason ends the run early, its workers
  /// stopped as stop_reason's are, as a result (LaunchEnding::Dropped): laconic advise dropping a
  /// probe that fell behind.
  std::function<std::string()> drop_reason;
  /// Asked every loop: while true, the pipes are not read (the workers block once theirs is
  /// full: back-pressure that bounds the controller's memory) and nobody is called hung.
  std::function<bool()> hold_input;
};

/// Exit status of a worker whose training diverged (DivergedError).
inline constexpr int kDivergedExitStatus = 3;

/// Seconds the other workers get after one failed before they are killed.
inline constexpr double kFailureGraceSeconds = 5;

/// A worker that sent nothing (not even its heartbeat, every second) for this long is silent.
inline constexpr double kSilentAfterSeconds = 3;

/// A worker whose main thread made no progress for this long (a step, a collective) is stalled.
inline constexpr double kStalledAfterSeconds = 10;

/// Forks `spec.worker.world` processes (or rank 0's alone, the others started through
/// `spec.remote`), each with a pipe on which it reports (see engine/core/worker_message.hpp);
/// stores every metric into `sink` as it arrives. A remote rank whose connection closes, or that
/// does not answer a kill within kFailureGraceSeconds, is lost (RemoteRanks::lost). When one
/// worker dies, the others get kFailureGraceSeconds to report before they are killed. A worker
/// that sends nothing for `timeout` seconds, or whose heartbeat says its main thread made no
/// progress for `timeout` + kFailureGraceSeconds (2 x `timeout` + kFailureGraceSeconds while an
/// elastic run's rank regroups, kRegroupingPhase), is hung: killed and named ("worker 0 hung: no
/// sign of life for 61 s (last heard during evaluating)"). In an elastic run a worker but 0 that
/// dies on its own is posted gone in the run's store and started again (at most
/// `spec.elastic_relaunches` times), and the run goes on; each loss is recorded as the run fact
/// `elastic_relaunches` when the run ends. When `stop` becomes true, all are
/// terminated; workers die with the controller (PR_SET_PDEATHSIG). Returns after every worker
/// has exited.
LaunchOutcome launch_workers(const LaunchSpec& spec, MetricsSink& sink, const LaunchObserver& observer,
                             const std::atomic<bool>& stop);

}  // namespace laconic::controller
