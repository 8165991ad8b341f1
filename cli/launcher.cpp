#include "cli/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include "cli/rank_relay.hpp"
#include "cli/worker_processes.hpp"
#include "engine/core/error.hpp"

namespace laconic::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct WorkerProcess {
  int rank = 0;
  pid_t pid = -1;
  int fd = -1;  // read end of the worker's pipe; -1 once drained
  bool exited = false;
  int status = 0;            // waitpid status
  std::string partial_line;  // bytes after the last newline
  std::string failure;       // the worker's own FailureMessage, if it sent one
  // Liveness: when anything last arrived, and the last heartbeat's phase and quiet time.
  Clock::time_point last_heard{};
  std::optional<Clock::time_point> first_heard;  // its first message: the process has started
  std::string phase = "starting";
  double quiet = 0;
  std::string hung;     // why the controller called it hung and killed it
  std::string stopped;  // why the controller stopped it otherwise (a peer failed first)
  // A rank of a launched sweep, on another process: its connection (pid stays -1), when it was
  // told to die, and whether it was lost (its connection closed, or it did not answer the kill).
  RelayConnection* remote = nullptr;
  std::optional<Clock::time_point> killed_at;
  bool lost = false;
};

// "worker 3", or "worker 3 (host b)" for a rank of another process.
std::string label(const WorkerProcess& w) {
  if (!w.remote) return str_cat("worker ", w.rank);
  return str_cat("worker ", w.rank, " (", w.remote->peer().host, ", ", w.remote->peer().address, ")");
}

// What the run waits on (LaunchObserver::on_wait): the running worker silent longest, once past
// kSilentAfterSeconds; else the one whose main thread made no progress longest, past
// kStalledAfterSeconds; else "".
std::string waiting_on(const std::vector<WorkerProcess>& workers,
                       const std::function<double(const WorkerProcess&)>& silent_for) {
  const WorkerProcess* silent = nullptr;
  const WorkerProcess* stalled = nullptr;
  for (const auto& w : workers) {
    if (w.exited || !w.first_heard) continue;
    if (!silent || silent_for(w) > silent_for(*silent)) silent = &w;
    if (!stalled || w.quiet + silent_for(w) > stalled->quiet + silent_for(*stalled)) stalled = &w;
  }
  if (silent && silent_for(*silent) > kSilentAfterSeconds)
    return str_cat("no word from ", label(*silent), " for ", static_cast<long>(silent_for(*silent)),
                   " s (last heard during ", silent->phase, ")");
  if (stalled && stalled->quiet + silent_for(*stalled) > kStalledAfterSeconds)
    return str_cat(label(*stalled), " has made no progress for ",
                   static_cast<long>(stalled->quiet + silent_for(*stalled)), " s (", stalled->phase, ")");
  return "";
}

// Sends `sig` to a worker: to its process here, or through its rank's connection.
void signal_worker(WorkerProcess& w, int sig) {
  if (w.exited) return;
  if (sig == SIGKILL) {
    if (w.killed_at && w.remote) return;  // told once; lost if it does not answer
    if (!w.killed_at) w.killed_at = Clock::now();
  }
  if (w.remote)
    w.remote->send_line(str_cat("S\t", sig));
  else
    ::kill(w.pid, sig);
}

// The rank's process or host is gone: its worker counts as exited, unsuccessfully.
void mark_lost(WorkerProcess& w, RemoteRanks& remote, const std::string& why) {
  w.exited = true;
  w.lost = true;
  w.fd = -1;
  w.failure = w.failure.empty() ? why : str_cat(why, " (it had reported: ", w.failure, ")");
  // The same words as the run's error (describe_exit).
  if (remote.lost.empty()) remote.lost = str_cat(label(w), " lost: ", w.failure);
}

std::string describe_exit(const WorkerProcess& w) {
  if (!w.hung.empty()) return w.hung;
  if (w.lost) return str_cat(label(w), " lost: ", w.failure);
  std::string text;
  if (!w.stopped.empty() && WIFSIGNALED(w.status)) {
    text = str_cat(label(w), " was stopped by the controller: ", w.stopped);
  } else if (WIFSIGNALED(w.status)) {
    int sig = WTERMSIG(w.status);
    text = str_cat(label(w), " was killed by signal ", sig, " (", ::strsignal(sig), ")");
  } else if (WIFEXITED(w.status) && WEXITSTATUS(w.status) == 127 && w.failure.empty()) {
    text = str_cat(label(w), " could not be started (exit status 127)");
  } else {
    text = str_cat(label(w), " exited with status ", WEXITSTATUS(w.status));
  }
  if (!w.failure.empty()) text += ": " + w.failure;
  return text;
}

bool succeeded(const WorkerProcess& w) {
  return w.exited && !w.lost && WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
}

// How many workers reported a checkpoint of each step.
using CheckpointCounts = std::map<std::int64_t, int>;

void handle_line(WorkerProcess& w, std::string_view line, MetricsSink& sink, const LaunchObserver& observer,
                 CheckpointCounts& checkpoints, int world) {
  auto message = decode_message(line);
  if (!message) return;  // a torn line can only come from a crash; the exit status says why
  w.last_heard = Clock::now();
  if (!w.first_heard) w.first_heard = w.last_heard;
  if (auto h = std::get_if<HeartbeatMessage>(&*message)) {
    w.phase = h->phase;
    w.quiet = h->quiet;
  } else if (auto m = std::get_if<MetricRecord>(&*message)) {
    sink.record(*m);
  } else if (auto p = std::get_if<ProgressMessage>(&*message)) {
    if (observer.on_progress && w.rank == 0) observer.on_progress(*p);
  } else if (auto c = std::get_if<CheckpointMessage>(&*message)) {
    if (++checkpoints[c->step] == world && observer.on_checkpoint) observer.on_checkpoint(c->step);
  } else if (auto f = std::get_if<FactMessage>(&*message)) {
    if (observer.on_fact && w.rank == 0) observer.on_fact(f->key, f->value);
  } else {
    w.failure = std::get<FailureMessage>(*message).text;
  }
}

// A remote rank's line "X<TAB>STATUS": its worker was reaped with this wait status.
bool remote_exit(WorkerProcess& w, std::string_view line) {
  if (!w.remote || !line.starts_with("X\t")) return false;
  w.status = std::atoi(std::string(line.substr(2)).c_str());
  w.exited = true;
  w.fd = -1;  // the connection stays open for the next run; this run reads no more of it
  return true;
}

void drain(WorkerProcess& w, MetricsSink& sink, const LaunchObserver& observer, CheckpointCounts& checkpoints,
           int world, RemoteRanks* remote) {
  char buffer[1 << 16];
  ssize_t n = ::read(w.fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    if (w.remote)
      mark_lost(w, *remote, "its connection to rank 0 closed: its process or its host went away");
    else
      ::close(w.fd);
    w.fd = -1;
    return;
  }
  w.partial_line.append(buffer, static_cast<std::size_t>(n));
  std::size_t start = 0, newline;
  while ((newline = w.partial_line.find('\n', start)) != std::string::npos) {
    const auto line = std::string_view(w.partial_line).substr(start, newline - start);
    start = newline + 1;
    if (remote_exit(w, line)) break;
    handle_line(w, line, sink, observer, checkpoints, world);
  }
  w.partial_line.erase(0, start);
}

void signal_all(std::vector<WorkerProcess>& workers, int sig) {
  for (auto& w : workers) signal_worker(w, sig);
}

// Kills and reaps the workers still running when launch_workers is left by an exception (a
// failed write of the sink or of an observer, a failed fork): no worker outlives its run's
// launch, and the next run of a sweep never starts beside the last one's leftovers.
class ReapOnError {
 public:
  explicit ReapOnError(std::vector<WorkerProcess>& workers) : workers_(workers) {}
  ~ReapOnError() {
    if (done_) return;
    // pid -1 is a worker not yet forked: kill(-1, ...) would signal every process there is.
    for (auto& w : workers_)
      if ((w.pid > 0 || w.remote) && !w.exited) signal_worker(w, SIGKILL);
    for (auto& w : workers_) {
      if (w.pid > 0 && !w.exited) ::waitpid(w.pid, &w.status, 0);  // SIGKILL cannot be ignored
      w.exited = true;
      if (w.fd >= 0 && !w.remote) ::close(w.fd);
    }
  }
  ReapOnError(const ReapOnError&) = delete;
  ReapOnError& operator=(const ReapOnError&) = delete;
  void done() { done_ = true; }

 private:
  std::vector<WorkerProcess>& workers_;
  bool done_ = false;
};

}  // namespace

LaunchOutcome launch_workers(const LaunchSpec& spec, MetricsSink& sink, const LaunchObserver& observer,
                             const std::atomic<bool>& stop) {
  std::optional<StoreDir> store_dir;
  if (!spec.remote) store_dir.emplace();
  const std::string store = spec.remote ? spec.rendezvous_prefix : store_dir->path();
  const auto launched = Clock::now();
  std::vector<WorkerProcess> workers(static_cast<std::size_t>(spec.workers));
  ReapOnError reap(workers);
  for (int r = 0; r < spec.workers; ++r) {
    auto& w = workers[static_cast<std::size_t>(r)];
    w.rank = r;
    w.last_heard = Clock::now();
    if (spec.remote && r > 0) {
      w.remote = spec.remote->connections.at(static_cast<std::size_t>(r - 1)).get();
      w.fd = w.remote->fd();
      if (!w.remote->send_line(str_cat("R\t", spec.run_index, "\t", escape_field(spec.run_name), "\t",
                                       escape_field(spec.rendezvous_prefix))))
        mark_lost(w, *spec.remote, "its connection to rank 0 is closed: its process or its host went away");
      continue;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(str_cat("pipe failed: ", std::strerror(errno)));
    // dup2 in the child clears O_CLOEXEC on the copy, so only fd 3 survives the exec.
    w.pid = start_worker(spec, store, r, fds[1]);
    ::close(fds[1]);
    w.fd = fds[0];
  }

  // Once one worker failed, the others get a few seconds to report what they saw, then go: a
  // run whose worker died ends within seconds, before or after the rendezvous.
  const auto grace = std::chrono::duration<double>(kFailureGraceSeconds);
  std::string first_failed;
  std::optional<Clock::time_point> first_failure, stop_time;
  auto last_tick = Clock::now();
  auto last_ping = Clock::now();
  auto input_resumed = Clock::now();
  std::string stopped;
  CheckpointCounts checkpoints;
  while (true) {
    std::vector<pollfd> polls;
    std::vector<WorkerProcess*> owners;
    for (auto& w : workers)
      if (w.fd >= 0) {
        polls.push_back({w.fd, POLLIN, 0});
        owners.push_back(&w);
      }
    bool all_exited = true;
    for (auto& w : workers) all_exited = all_exited && w.exited;
    if (polls.empty() && all_exited) break;

    const bool held = observer.hold_input && observer.hold_input();
    if (held) {
      ::usleep(200'000);
      input_resumed = Clock::now();  // silence while not read is the controller's, not theirs
    } else if (!polls.empty() && ::poll(polls.data(), polls.size(), 200) > 0) {
      for (std::size_t i = 0; i < polls.size(); ++i)
        if (polls[i].revents & (POLLIN | POLLHUP | POLLERR))
          drain(*owners[i], sink, observer, checkpoints, spec.workers, spec.remote);
    } else if (polls.empty()) {
      ::usleep(50'000);
    }

    const auto now = Clock::now();
    // One clock for every message about a silent worker: since it was last heard, while its
    // pipe or connection was read.
    const auto silent_for = [&](const WorkerProcess& w) {
      return std::chrono::duration<double>(now - std::max(w.last_heard, input_resumed)).count();
    };
    // A sign of life to the other ranks' laconic processes, which give up on a rank 0 they no
    // longer hear (a link down keeps a TCP connection open for many minutes).
    if (spec.remote && now - last_ping > std::chrono::duration<double>(kRankZeroPingSeconds)) {
      last_ping = now;
      for (auto& w : workers)
        if (w.remote && !w.exited) w.remote->send_line("P");
    }
    for (auto& w : workers) {
      if (!w.exited && !w.remote && ::waitpid(w.pid, &w.status, WNOHANG) == w.pid) w.exited = true;
      // A remote rank told to die that does not answer is unreachable: lost, on the clock of its
      // silence, which the message counts as the hung one did.
      if (!w.exited && w.remote && w.killed_at && now - *w.killed_at > grace) {
        w.hung.clear();
        mark_lost(w, *spec.remote,
                  str_cat("no sign of life for ", static_cast<long>(silent_for(w)), " s (last heard during ", w.phase,
                          ") and no answer to rank 0's kill: its process, its host or the link to it is gone"));
      }
      if (w.exited && !succeeded(w) && !first_failure) {
        first_failure = now;
        first_failed = str_cat(label(w), " failed first");
      }
    }
    // A worker silent for `timeout` seconds (a stopped or frozen process), or whose main thread
    // made no progress for longer than a collective may wait, is hung: killed, and named.
    for (auto& w : workers) {
      if (w.exited || !w.hung.empty()) continue;
      const double silent = silent_for(w);
      const double stalled = w.quiet + silent;
      if (silent <= spec.timeout && stalled <= spec.timeout + kFailureGraceSeconds) continue;
      w.hung = silent > spec.timeout
                   ? str_cat(label(w), " hung: no sign of life for ", static_cast<long>(silent),
                             " s (last heard during ", w.phase, ")")
                   : str_cat(label(w), " hung: no progress for ", static_cast<long>(stalled), " s during ", w.phase);
      signal_worker(w, SIGKILL);
      if (!first_failure) {
        first_failure = now;
        first_failed = str_cat(label(w), " hung");
      }
    }
    if (first_failure && now - *first_failure > grace)
      for (auto& w : workers)
        if (!w.exited && w.hung.empty()) {
          // One that has been silent for a while was frozen, not merely waiting on the failed one.
          const double silent = silent_for(w);
          if (silent > kSilentAfterSeconds)
            w.hung = str_cat(label(w), " hung: no sign of life for ", static_cast<long>(silent),
                             " s (last heard during ", w.phase, ")");
          else if (w.stopped.empty())
            w.stopped = first_failed;
          if (!w.killed_at) signal_worker(w, SIGKILL);
        }
    if (stopped.empty() && observer.stop_reason) stopped = observer.stop_reason();
    if ((stop || !stopped.empty()) && !stop_time) {
      stop_time = now;
      signal_all(workers, SIGTERM);
    }
    if (stop_time && now - *stop_time > std::chrono::seconds(5)) signal_all(workers, SIGKILL);
    if (observer.on_wait) observer.on_wait(waiting_on(workers, silent_for));
    if (observer.on_tick && now - last_tick > std::chrono::seconds(5)) {
      last_tick = now;
      double silent = 0;
      for (const auto& w : workers)
        if (!w.exited) silent = std::max(silent, std::chrono::duration<double>(now - w.last_heard).count());
      observer.on_tick(silent);
    }
  }
  const auto reaped = Clock::now();
  sink.flush();
  reap.done();  // every worker has exited and been reaped

  LaunchOutcome outcome;
  const WorkerProcess& first = workers.front();
  if (first.first_heard) {
    outcome.start_seconds = std::chrono::duration<double>(*first.first_heard - launched).count();
    outcome.teardown_seconds = std::chrono::duration<double>(reaped - first.last_heard).count();
  }
  outcome.total_seconds = std::chrono::duration<double>(reaped - launched).count();
  outcome.interrupted = stop.load();
  outcome.stopped = stopped;
  outcome.ok = !outcome.interrupted && stopped.empty();
  // Causes first: a lost rank, then one killed by a signal (kill -9, the OOM killer) or hung, whose
  // peers' failures ("Connection reset by peer") only follow from it; those peers last.
  const auto rank_of_cause = [](const WorkerProcess& w) {
    if (w.lost) return 0;
    const bool killed = (WIFSIGNALED(w.status) && w.stopped.empty()) || !w.hung.empty();
    return killed ? 1 : 2;
  };
  for (int cause = 0; cause <= 2; ++cause)
    for (const auto& w : workers) {
      if (succeeded(w) || rank_of_cause(w) != cause) continue;
      outcome.ok = false;
      outcome.error += (outcome.error.empty() ? "" : "; ") + describe_exit(w);
    }
  // A diverged worker's reason is the run's; its peers only lost their connection to it.
  for (const auto& w : workers)
    if (w.exited && WIFEXITED(w.status) && WEXITSTATUS(w.status) == kDivergedExitStatus && !outcome.interrupted) {
      outcome.diverged = true;
      outcome.error = w.failure.empty() ? describe_exit(w) : w.failure;
      break;
    }
  // Stopped by the user: the workers' signals (the terminal's SIGINT, the controller's SIGTERM)
  // are the stop itself, not a cause to look for.
  if (outcome.interrupted) outcome.error = "stopped by the user (Ctrl-C or SIGTERM)";
  if (!outcome.stopped.empty() && !outcome.interrupted) outcome.error = "stopped: " + outcome.stopped;
  return outcome;
}

}  // namespace laconic::cli
