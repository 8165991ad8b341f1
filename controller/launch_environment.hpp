#pragma once
// Whether `laconic run` was started as one rank of a launcher (torchrun, srun, mpirun, or the
// explicit --rank/--world/--store flags), and what that rank needs to find the others
// (docs/multi-host.md).
#include <map>
#include <optional>
#include <string>

#include "engine/comm/store.hpp"

namespace laconic::controller {

/// This process as one rank of every run of the sweep.
struct LaunchedRank {
  std::string launcher;  ///< "torchrun", "slurm", "openmpi", "env" (RANK and WORLD_SIZE by hand), "flags"
  int rank = 0;
  int world = 1;
  comm::StoreAddress store;
  /// The launcher serves the TCP store (torchrun's agent: TORCHELASTIC_USE_AGENT_STORE=True);
  /// otherwise rank 0 serves it, as PyTorch's env:// does.
  bool store_served_by_launcher = false;
  std::string interface;  ///< GLOO_SOCKET_IFNAME: the interface Gloo and rank 0's relay use ("" = by route)
  /// The host whose route picks this rank's address when no interface is named: MASTER_ADDR, or
  /// the store's host ("" for a file store without MASTER_ADDR: the host name's address).
  std::string route_to;
  /// What was read, for messages: "torchrun (RANK=2, WORLD_SIZE=4, MASTER_ADDR=10.0.0.1, MASTER_PORT=29500)".
  std::string description;
  /// What tells this launch from others that meet in the same store (a shared Redis server):
  /// --launch-id, else LACONIC_LAUNCH_ID, else the launcher's job: torchrun's TORCHELASTIC_RUN_ID,
  /// Slurm's SLURM_JOB_ID.SLURM_STEP_ID, Open MPI's PMIX_NAMESPACE (or OMPI_MCA_ess_base_jobid);
  /// "" when there is none. Its ranks meet under laconic/LAUNCH_ID/ in the store.
  std::string launch_id;
};

/// The explicit flags of `laconic run`: all three, or none.
struct LaunchFlags {
  int rank = -1;            ///< --rank; -1 = not given
  int world = -1;           ///< --world; -1 = not given
  std::string store;        ///< --store
  std::string launch_id{};  ///< --launch-id; "" = from the environment
};

using Environment = std::map<std::string, std::string>;

/// This process's environment as a map.
Environment process_environment();

/// The rank this process is, from the flags (first) or a launcher's variables: torchrun's RANK,
/// WORLD_SIZE, MASTER_ADDR, MASTER_PORT; Open MPI's OMPI_COMM_WORLD_RANK/SIZE; Slurm's
/// SLURM_PROCID/NTASKS in a task of srun (SLURM_STEP_ID set; not in the batch script itself)
/// (both with MASTER_ADDR and MASTER_PORT). Nothing when none is there, or
/// when the launcher started one rank only (laconic then forks the run's workers itself).
/// ConfigError naming what is missing or malformed (a rank out of range, MASTER_PORT not a port,
/// only some of the flags).
std::optional<LaunchedRank> detect_launch(const Environment& env, const LaunchFlags& flags);

/// The IPv4 address this host uses to reach `host` (the source address of a route to it), or
/// of interface `interface` when one is named; the host name's address when both are empty, and
/// 127.0.0.1 when it has none. ConfigError when the interface has no IPv4 address or `host` no
/// route.
std::string local_address(const std::string& interface, const std::string& host);

}  // namespace laconic::controller
