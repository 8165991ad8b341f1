#pragma once
// A sweep whose ranks a launcher started (torchrun, srun, mpirun, or --rank/--world/--store):
// every process of the launch is one rank of every run. Rank 0 records into its database and
// decides what runs; the others join it and train their rank of each run it names
// (docs/multi-host.md, docs/architecture.md "Process model").
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "controller/launch_environment.hpp"
#include "controller/launcher.hpp"
#include "controller/rank_relay.hpp"
#include "controller/run_sweep.hpp"
#include "engine/catalog.hpp"
#include "lua/experiment.hpp"

namespace laconic::controller {

/// ConfigError unless every selected run can be trained by this launch: it needs exactly
/// `launched.world` ranks (workers + servers), and nothing that stays on one host (an emulated
/// link, --jobs, --checkpoint-every). Every rank checks the same, before anything connects.
void check_launchable(const SweepOptions& args, const LaunchedRank& launched, const lua::ExperimentPlan& plan,
                      const engine::EngineCatalog& catalog, const std::vector<std::size_t>& selected);

/// What this process tells rank 0 when it joins (and what rank 0 checks the others against).
RankHello own_hello(const LaunchedRank& launched, const lua::ExperimentPlan& plan, const engine::EngineCatalog& catalog,
                    const std::vector<std::size_t>& selected);

/// Rank 0's side of a launched sweep, from the moment every rank has joined.
class LaunchedSweep {
 public:
  /// Opens the store (serving it as a TCP store unless the launcher does), listens on this
  /// host's address toward the others, and waits up to args.launch_timeout for every rank.
  LaunchedSweep(const SweepOptions& args, const LaunchedRank& launched, const RankHello& mine,
                const std::atomic<bool>& stop);
  /// Tells the ranks the sweep is over (exit status 1 unless finish() was called).
  ~LaunchedSweep();
  LaunchedSweep(const LaunchedSweep&) = delete;
  LaunchedSweep& operator=(const LaunchedSweep&) = delete;

  const LaunchedRank& launched() const { return launched_; }
  /// The address rank 0's worker listens on.
  const std::string& address() const { return address_; }
  RemoteRanks& remote() { return remote_; }
  /// The key prefix of one run's rendezvous in the store: unique to this launch and run.
  std::string rendezvous_prefix(std::int64_t run_id) const;
  /// The ranks by host: "a: ranks 0, 1 (2 cores); b: ranks 2, 3 (2 cores)".
  std::string hosts() const;
  /// Ranks on rank 0's host.
  int ranks_here() const;
  /// Whether some host has more ranks than cores.
  bool oversubscribed() const;
  /// Tells every rank that the sweep is over and to exit with `status`.
  void finish(int status);

 private:
  LaunchedRank launched_;
  std::shared_ptr<comm::KeyValueStore> store_;  // kept open: rank 0 may be the server
  std::string address_;
  std::string nonce_;
  RemoteRanks remote_;
  std::vector<RankHello> ranks_;  // every rank's hello, rank 0 first
  bool finished_ = false;
};

/// Any rank but 0: joins rank 0 and trains this rank of each run it names, until it says the
/// sweep is over; returns the exit status rank 0 gives (1 when rank 0 is gone, 130 when
/// stopped). Its output is a line per run.
/// `callbacks`: the experiment file's functions (may be null), which its forked workers call.
int follow_rank0(const SweepOptions& args, const LaunchedRank& launched, const lua::ExperimentPlan& plan,
                 RunCallbacks* callbacks, const engine::EngineCatalog& catalog, const RankHello& mine,
                 const std::atomic<bool>& stop);

}  // namespace laconic::controller
