#pragma once
// A run's worker processes: forked from the controller (LibTorch already loaded) or exec'd as
// `laconic worker ...`, each with its pipe to the controller as fd 3, dying with it; and the
// private rendezvous directory of a run's workers, which a later controller removes if this one
// died before it could.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "controller/launcher.hpp"

namespace laconic::controller {

/// Rendezvous directories are TMPDIR/laconic-store-PID-XXXXXX, PID the controller's.
inline constexpr const char* kStoreDirPrefix = "laconic-store-";

/// True when `name` is `prefix` followed by the pid of a process that no longer exists (not
/// this one): a leftover of a controller that died before it could clean up.
bool left_by_dead_controller(const std::string& name, const std::string& prefix);

/// Removes the rendezvous directories whose controller is gone (killed before it could remove
/// them); returns their paths.
std::vector<std::string> remove_stale_store_dirs();

/// The name a forked worker gives itself (PR_SET_NAME: what ps, top and /proc/PID/comm show;
/// at most 15 characters): "laconic rank 3".
std::string worker_process_name(int rank);

/// Forks one worker process. It has `write_fd` as its fd 3 and none of this process's other
/// files, the name worker_process_name(rank), the default SIGINT and SIGTERM, one thread per
/// library (kPinnedThreadVariables), dies with this process, and exits with what
/// `body(3)` returns (1 if it throws).
pid_t fork_worker_process(int rank, int write_fd, const std::function<int(int message_fd)>& body);

/// Starts the worker told `args` (its rank, its store) with `write_fd` as its fd 3: a fork
/// calling spec.in_fork when it is set, else `spec.executable worker ARGS`. Returns its pid.
pid_t start_worker(const LaunchSpec& spec, WorkerArgs args, int write_fd);

/// A private rendezvous directory for Gloo's FileStore, removed when the run is over.
class StoreDir {
 public:
  /// Creates TMPDIR/laconic-store-PID-XXXXXX (Error when it cannot).
  StoreDir();
  ~StoreDir();
  StoreDir(const StoreDir&) = delete;
  StoreDir& operator=(const StoreDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace laconic::controller
