// launch_workers with stand-in workers: shell scripts that speak the worker protocol on fd 3.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "cli_harness.hpp"
#include "controller/launcher.hpp"
#include "controller/supervised_worker.hpp"
#include "engine/core/error.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/worker_message.hpp"

using namespace laconic;
using laconic::testing::make_temp_dir;
using laconic::testing::write_file;

namespace {

// A worker that reports `lines` metric lines 20 ms apart (forever when `lines` is 0), then exits 0.
std::string fake_worker(const std::string& dir, int lines) {
  const std::string line = encode_message(MetricRecord{"train_loss", 1, 0, 0, 0.5, 2.0});
  const std::string path = dir + "/worker.sh";
  write_file(path, "#!/bin/sh\ni=0\nwhile [ " + std::to_string(lines) + " -eq 0 ] || [ $i -lt " +
                       std::to_string(lines) + " ]; do\n  printf '%s' '" + line +
                       "' >&3\n  i=$((i + 1))\n  sleep 0.02\ndone\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

struct CountingSink : MetricsSink {
  int records = 0;
  int fail_at = -1;  ///< record() number that throws, as a failed commit would
  void record(const MetricRecord&) override {
    if (++records == fail_at) throw StorageError("disk I/O error (from the test)", 10);
  }
  void flush() override {}
};

// True when this process has no child left, running or unreaped.
bool no_children() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace

TEST_CASE("launch_workers relays every worker's metrics and reports success", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  controller::LaunchSpec spec;
  spec.executable = fake_worker(dir, 3);
  spec.worker.order.resolved.world_size = 2;
  spec.timeout = 5;
  CountingSink sink;
  const std::atomic<bool> stop{false};
  const controller::LaunchOutcome outcome = controller::launch_workers(spec, sink, {}, stop);
  CHECK(outcome.ok());
  CHECK(outcome.error.empty());
  CHECK(sink.records == 6);
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a sink that fails mid-run kills and reaps the workers before the error goes up", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  controller::LaunchSpec spec;
  spec.executable = fake_worker(dir, 0);  // would report forever
  spec.worker.order.resolved.world_size = 2;
  spec.timeout = 5;
  CountingSink sink;
  sink.fail_at = 3;
  const std::atomic<bool> stop{false};
  CHECK_THROWS_WITH(controller::launch_workers(spec, sink, {}, stop), Catch::Contains("disk I/O error"));
  CHECK(no_children());  // before the fix both workers went on running, unreaped
  std::filesystem::remove_all(dir);
}

TEST_CASE("a worker that falls silent for the timeout is called hung, killed and named", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  // Rank 0 reports once and then sleeps (a frozen process sends no heartbeat); rank 1 reports on.
  const std::string line = encode_message(MetricRecord{"train_loss", 1, 0, 0, 0.5, 2.0});
  const std::string path = dir + "/worker.sh";
  write_file(path, "#!/bin/sh\nprintf '%s' '" + line +
                       "' >&3\ncase \"$*\" in *'--rank 0'*) exec sleep 60 ;; esac\n"
                       "i=0\nwhile [ $i -lt 400 ]; do printf '%s' '" +
                       line + "' >&3; i=$((i + 1)); sleep 0.02; done\n");
  ::chmod(path.c_str(), 0755);
  controller::LaunchSpec spec;
  spec.executable = path;
  spec.worker.order.resolved.world_size = 2;
  spec.timeout = 1.5;
  CountingSink sink;
  const std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  const controller::LaunchOutcome outcome = controller::launch_workers(spec, sink, {}, stop);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(outcome.ok());
  CHECK_THAT(outcome.error, Catch::Contains("worker 0 hung: no sign of life for 1 s (last heard during starting)"));
  // Rank 1 was still reporting when rank 0 was caught: stopped after the grace, not hung.
  CHECK_THAT(outcome.error, Catch::Contains("worker 1 was stopped by the controller: worker 0 hung"));
  CHECK(took < 1.5 + controller::kFailureGraceSeconds + 3);
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a rank regrouping an elastic run may make no progress for twice the timeout", "[cli][launcher]") {
  // Its heartbeat says its main thread made no progress for up to 8 s, past the 2 s timeout + 5 s
  // allowed a training rank but within the 2 x 2 s + 5 s allowed while it regroups (worker 0 may
  // wait that long for the members' reports); then it exits, having made progress.
  const std::string dir = make_temp_dir();
  std::string script = "#!/bin/sh\n";
  for (int i = 0; i <= 40; ++i)
    script += "printf '%s' '" + encode_message(HeartbeatMessage{kRegroupingPhase, 0.2 * i}) + "' >&3\nsleep 0.2\n";
  write_file(dir + "/worker.sh", script);
  ::chmod((dir + "/worker.sh").c_str(), 0755);
  controller::LaunchSpec spec;
  spec.executable = dir + "/worker.sh";
  spec.worker.order.resolved.world_size = 1;
  spec.timeout = 2;
  CountingSink sink;
  const std::atomic<bool> stop{false};
  const controller::LaunchOutcome outcome = controller::launch_workers(spec, sink, {}, stop);
  INFO(outcome.error);
  CHECK(outcome.ok());
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a stop reason from the observer stops the workers and is reported", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  controller::LaunchSpec spec;
  spec.executable = fake_worker(dir, 0);
  spec.worker.order.resolved.world_size = 2;
  spec.timeout = 5;
  CountingSink sink;
  controller::LaunchObserver observer;
  observer.stop_reason = [&]() -> std::string { return sink.records >= 10 ? "the database took no writes" : ""; };
  const std::atomic<bool> stop{false};
  const controller::LaunchOutcome outcome = controller::launch_workers(spec, sink, observer, stop);
  CHECK_FALSE(outcome.ok());
  CHECK(outcome.ending != controller::LaunchEnding::Interrupted);
  CHECK(outcome.stopped == "the database took no writes");
  CHECK(outcome.error == "stopped: the database took no writes");
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a run stopped by the user says so, not which signal its workers died of", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  controller::LaunchSpec spec;
  spec.executable = fake_worker(dir, 0);
  spec.worker.order.resolved.world_size = 2;
  spec.timeout = 5;
  CountingSink sink;
  std::atomic<bool> stop{false};
  controller::LaunchObserver observer;
  // Ctrl-C, as the controller's signal handler raises it, once the workers are training.
  observer.stop_reason = [&]() -> std::string {
    if (sink.records >= 10) stop = true;
    return "";
  };
  const controller::LaunchOutcome outcome = controller::launch_workers(spec, sink, observer, stop);
  CHECK(outcome.ending == controller::LaunchEnding::Interrupted);
  CHECK(outcome.error == "stopped by the user (Ctrl-C or SIGTERM)");
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("forked workers run the given function with their rank and report on their pipe", "[cli][launcher]") {
  controller::LaunchSpec spec;
  spec.worker.order.resolved.world_size = 3;
  spec.timeout = 5;
  spec.in_fork = [](const controller::WorkerArgs& worker) {
    // Each rank reports rank + 1 metrics and checks it was given the run's rendezvous directory.
    const int rank = worker.rank, fd = worker.message_fd;
    if (!std::filesystem::is_directory(worker.store)) return 1;
    const std::string line = encode_message(MetricRecord{"train_loss", rank, 0, rank, 0.5, 2.0});
    for (int i = 0; i <= rank; ++i)
      if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return 1;
    return 0;
  };
  CountingSink sink;
  const std::atomic<bool> stop{false};
  const controller::LaunchOutcome ok = controller::launch_workers(spec, sink, {}, stop);
  CHECK(ok.ok());
  CHECK(sink.records == 1 + 2 + 3);
  CHECK(ok.start_seconds > 0);
  CHECK(ok.total_seconds >= ok.start_seconds);
  CHECK(no_children());

  // A rank that throws exits 1; one that returns the diverged status makes the run diverged.
  spec.in_fork = [](const controller::WorkerArgs& worker) -> int {
    const int rank = worker.rank;
    if (rank == 1) throw std::runtime_error("from the test");
    return rank == 2 ? controller::kDivergedExitStatus : 0;
  };
  const controller::LaunchOutcome failed = controller::launch_workers(spec, sink, {}, stop);
  CHECK_FALSE(failed.ok());
  CHECK(failed.ending == controller::LaunchEnding::Diverged);
  CHECK(failed.error.find("worker 2 exited with status 3") != std::string::npos);
  CHECK(no_children());
}

TEST_CASE("how a process ended is told of its worker, or of the one process of thread ranks", "[cli][launcher]") {
  controller::SupervisedWorker one;
  one.rank = 1;
  one.exited = true;
  one.status = SIGKILL;  // waitpid's status of a process killed by signal 9 (no core)
  REQUIRE(WIFSIGNALED(one.status));
  CHECK_THAT(one.describe_exit(), Catch::StartsWith("worker 1 was killed by signal 9"));
  controller::SupervisedWorker threads = one;
  threads.rank = 0;
  threads.ranks = 16;
  CHECK_THAT(threads.describe_exit(), Catch::StartsWith("the process of workers 0-15 was killed by signal 9"));
}
