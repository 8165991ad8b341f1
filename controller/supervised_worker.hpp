#pragma once
// One rank of a run as the controller sees it while it supervises the run (controller/launcher.hpp):
// its process here or its connection to another host, what it reported, when it was last heard
// from and how it ended.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/metrics.hpp"

namespace laconic::controller {

class RelayConnection;  // controller/rank_relay.hpp
struct LaunchObserver;  // controller/launcher.hpp

using SteadyClock = std::chrono::steady_clock;

/// How many ranks reported a checkpoint of each step.
using CheckpointCounts = std::map<std::int64_t, int>;

struct SupervisedWorker {
  int rank = 0;   ///< its (first) rank
  int ranks = 1;  ///< ranks it holds, as threads, from `rank` on
  int incarnation = 0;  ///< an elastic run's: how many times its rank was relaunched
  pid_t pid = -1;
  int fd = -1;  ///< read end of the worker's pipe (or its rank's connection); -1 once drained
  bool exited = false;
  int status = 0;            ///< waitpid status
  std::string partial_line;  ///< bytes after the last newline
  std::string failure;       ///< the worker's own FailureMessage, if it sent one
  /// Liveness: when anything last arrived, and the last heartbeat's phase and quiet time.
  SteadyClock::time_point last_heard{};
  std::optional<SteadyClock::time_point> first_heard;  ///< its first message: the process has started
  std::string phase = "starting";
  double quiet = 0;
  std::string hung;     ///< why the controller called it hung and killed it
  std::string stopped;  ///< why the controller stopped it otherwise (a peer failed first)
  /// A rank of a launched sweep, on another process: its connection (pid stays -1), when it was
  /// told to die, and whether it was lost (its connection closed, or it did not answer the kill).
  RelayConnection* remote = nullptr;
  std::optional<SteadyClock::time_point> killed_at;
  bool lost = false;
  /// An elastic run's rank lost with its host, which the run went on without: not a failure.
  bool left = false;

  /// "worker 3", "the process of workers 0-63" (threads of one process: one subject for "was
  /// killed"), or "worker 3 (b, 10.0.0.2)" for a rank of another process.
  std::string label() const;
  /// Exited 0 (a lost rank never succeeded).
  bool succeeded() const;
  /// Exited with kDivergedExitStatus.
  bool diverged() const;
  /// Killed by a signal it was not sent as a peer's follower, or hung: a cause, not a consequence.
  bool killed() const;
  /// How it ended, in a sentence: "worker 0 hung: ...", "worker 1 exited with status 1: ...".
  std::string describe_exit() const;

  /// Sends `sig` to its process here, or through its rank's connection (a SIGKILL once).
  void signal(int sig);
  /// The rank's process or host is gone: it counts as exited, unsuccessfully. Returns the
  /// sentence that says so.
  std::string mark_lost(const std::string& why);
  /// Reads what its pipe or connection holds and handles every whole line: metrics to `sink`,
  /// the rest to `observer`. Returns the sentence of mark_lost() when its connection closed.
  std::string drain(MetricsSink& sink, const LaunchObserver& observer, CheckpointCounts& checkpoints, int world);
  /// Reaps it if its process here has exited.
  void poll_exit();

 private:
  void handle_line(std::string_view line, MetricsSink& sink, const LaunchObserver& observer,
                   CheckpointCounts& checkpoints, int world);
  bool remote_exit(std::string_view line);
};

}  // namespace laconic::controller
