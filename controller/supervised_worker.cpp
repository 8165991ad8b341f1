#include "controller/supervised_worker.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "controller/launcher.hpp"
#include "controller/rank_relay.hpp"
#include "engine/core/error.hpp"
#include "engine/core/worker_message.hpp"

namespace laconic::controller {

std::string SupervisedWorker::label() const {
  if (ranks > 1) return str_cat("the process of workers ", rank, "-", rank + ranks - 1);
  if (!remote) return str_cat("worker ", rank);
  return str_cat("worker ", rank, " (", remote->peer().host, ", ", remote->peer().address, ")");
}

bool SupervisedWorker::succeeded() const {
  return exited && !lost && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool SupervisedWorker::diverged() const {
  return exited && WIFEXITED(status) && WEXITSTATUS(status) == kDivergedExitStatus;
}

bool SupervisedWorker::killed() const { return (WIFSIGNALED(status) && stopped.empty()) || !hung.empty(); }

std::string SupervisedWorker::describe_exit() const {
  if (!hung.empty()) return hung;
  if (lost) return str_cat(label(), " lost: ", failure);
  std::string text;
  if (!stopped.empty() && WIFSIGNALED(status)) {
    text = str_cat(label(), " was stopped by the controller: ", stopped);
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    text = str_cat(label(), " was killed by signal ", sig, " (", ::strsignal(sig), ")");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && failure.empty()) {
    text = str_cat(label(), " could not be started (exit status 127)");
  } else {
    text = str_cat(label(), " exited with status ", WEXITSTATUS(status));
  }
  if (!failure.empty()) text += ": " + failure;
  return text;
}

void SupervisedWorker::signal(int sig) {
  if (exited) return;
  if (sig == SIGKILL) {
    if (killed_at && remote) return;  // told once; lost if it does not answer
    if (!killed_at) killed_at = SteadyClock::now();
  }
  if (remote)
    remote->send_line(encode(RankOrder{SignalOrder{sig}}));
  else
    ::kill(pid, sig);
}

std::string SupervisedWorker::mark_lost(const std::string& why) {
  exited = true;
  lost = true;
  fd = -1;
  failure = failure.empty() ? why : str_cat(why, " (it had reported: ", failure, ")");
  return describe_exit();  // the same words as the run's error
}

void SupervisedWorker::handle_line(std::string_view line, MetricsSink& sink, const LaunchObserver& observer,
                                   CheckpointCounts& checkpoints, int world) {
  auto message = decode_message(line);
  if (!message) return;  // a torn line can only come from a crash; the exit status says why
  last_heard = SteadyClock::now();
  if (!first_heard) first_heard = last_heard;
  if (auto h = std::get_if<HeartbeatMessage>(&*message)) {
    phase = h->phase;
    quiet = h->quiet;
  } else if (auto m = std::get_if<MetricRecord>(&*message)) {
    sink.record(*m);
  } else if (auto p = std::get_if<ProgressMessage>(&*message)) {
    if (observer.on_progress && rank == 0) observer.on_progress(*p);
  } else if (auto c = std::get_if<CheckpointMessage>(&*message)) {
    if (++checkpoints[c->step] == world && observer.on_checkpoint) observer.on_checkpoint(c->step);
  } else if (auto f = std::get_if<FactMessage>(&*message)) {
    if (observer.on_fact && rank == 0) observer.on_fact(f->key, f->value);
  } else {
    failure = std::get<FailureMessage>(*message).text;
  }
}

// A remote rank's WorkerExit: its worker was reaped with this wait status.
bool SupervisedWorker::remote_exit(std::string_view line) {
  if (!remote) return false;
  const auto exit = decode_worker_exit(std::string(line));
  if (!exit) return false;
  status = exit->status;
  exited = true;
  fd = -1;  // the connection stays open for the next run; this run reads no more of it
  return true;
}

std::string SupervisedWorker::drain(MetricsSink& sink, const LaunchObserver& observer, CheckpointCounts& checkpoints,
                                    int world) {
  char buffer[1 << 16];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return "";
  if (n <= 0) {
    if (remote) return mark_lost("its connection to rank 0 closed: its process or its host went away");
    ::close(fd);
    fd = -1;
    return "";
  }
  partial_line.append(buffer, static_cast<std::size_t>(n));
  std::size_t start = 0, newline;
  while ((newline = partial_line.find('\n', start)) != std::string::npos) {
    const auto line = std::string_view(partial_line).substr(start, newline - start);
    start = newline + 1;
    if (remote_exit(line)) break;
    handle_line(line, sink, observer, checkpoints, world);
  }
  partial_line.erase(0, start);
  return "";
}

void SupervisedWorker::poll_exit() {
  if (!exited && !remote && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
}

}  // namespace laconic::controller
