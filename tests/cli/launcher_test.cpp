// launch_workers with stand-in workers: shell scripts that speak the worker protocol on fd 3.
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "cli/launcher.hpp"
#include "cli_harness.hpp"
#include "engine/core/error.hpp"
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
  cli::LaunchSpec spec;
  spec.executable = fake_worker(dir, 3);
  spec.workers = 2;
  spec.timeout = 5;
  CountingSink sink;
  const std::atomic<bool> stop{false};
  const cli::LaunchOutcome outcome = cli::launch_workers(spec, sink, {}, stop);
  CHECK(outcome.ok);
  CHECK(outcome.error.empty());
  CHECK(sink.records == 6);
  CHECK(no_children());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a sink that fails mid-run kills and reaps the workers before the error goes up", "[cli][launcher]") {
  const std::string dir = make_temp_dir();
  cli::LaunchSpec spec;
  spec.executable = fake_worker(dir, 0);  // would report forever
  spec.workers = 2;
  spec.timeout = 5;
  CountingSink sink;
  sink.fail_at = 3;
  const std::atomic<bool> stop{false};
  CHECK_THROWS_WITH(cli::launch_workers(spec, sink, {}, stop), Catch::Contains("disk I/O error"));
  CHECK(no_children());  // before the fix both workers went on running, unreaped
  std::filesystem::remove_all(dir);
}
