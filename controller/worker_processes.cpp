#include "controller/worker_processes.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "controller/pinned_threads.hpp"
#include "engine/core/error.hpp"
#include "engine/core/worker_message.hpp"

namespace laconic::controller {
namespace {

/// The fd on which a worker finds its end of the pipe.
constexpr int kMessageFd = 3;

// The controller's environment with one thread for OpenMP and BLAS libraries: OpenBLAS sizes its
// thread pool from OPENBLAS_NUM_THREADS when it is loaded, before the worker's main() could.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool pinned = false;
    for (const char* name : kPinnedThreadVariables) pinned = pinned || entry.rfind(std::string(name) + "=", 0) == 0;
    if (!pinned) env.push_back(entry);
  }
  for (const char* name : kPinnedThreadVariables) env.push_back(std::string(name) + "=1");
  return env;
}

}  // namespace

// A worker forked from the controller: it calls `body` and exits with its status, never
// returning into the controller's code (whose objects it shares copy-on-write).
pid_t fork_worker_process(int rank, int write_fd, const std::function<int(int message_fd)>& body) {
  const pid_t controller = ::getpid();
  std::cout.flush();  // else the child's copy of a pending buffer could be written twice
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw Error(str_cat("fork failed: ", std::strerror(errno)));
  if (pid > 0) return pid;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != controller) ::_exit(127);
  if (::dup2(write_fd, kMessageFd) < 0) ::_exit(127);
  // Its name in ps, top and /proc/PID/comm (its command line stays the controller's).
  const std::string name = worker_process_name(rank);
  ::prctl(PR_SET_NAME, name.c_str());
  // Nothing of the controller's stays open: its database, the other workers' pipes.
  ::close_range(kMessageFd + 1, ~0U, 0);
  // The controller's Ctrl-C handler is not the worker's: it dies of SIGINT and SIGTERM.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  for (const char* name : kPinnedThreadVariables) ::setenv(name, "1", 1);
  int status = 1;
  try {
    status = body(kMessageFd);
  } catch (...) {}
  std::cout.flush();
  std::cerr.flush();
  ::_exit(status);
}

namespace {

pid_t fork_worker(const LaunchSpec& spec, WorkerArgs worker, int write_fd) {
  return fork_worker_process(worker.rank, write_fd, [&](int message_fd) {
    worker.message_fd = message_fd;
    return spec.in_fork(worker);
  });
}

pid_t exec_worker(const LaunchSpec& spec, WorkerArgs worker, int write_fd) {
  worker.message_fd = kMessageFd;
  std::vector<std::string> args = {spec.executable, "worker"};
  for (std::string& word : worker.to_argv()) args.push_back(std::move(word));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = worker_environment();
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t controller = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw Error(str_cat("fork failed: ", std::strerror(errno)));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. A worker must not outlive its controller
    // (its measurements would go nowhere): die with it, even if it already died.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != controller) ::_exit(127);
    if (::dup2(write_fd, kMessageFd) < 0) ::_exit(127);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

pid_t start_worker(const LaunchSpec& spec, WorkerArgs args, int write_fd) {
  return spec.in_fork ? fork_worker(spec, std::move(args), write_fd) : exec_worker(spec, std::move(args), write_fd);
}

std::string worker_process_name(int rank) { return "laconic rank " + std::to_string(rank); }

bool left_by_dead_controller(const std::string& name, const std::string& prefix) {
  if (!name.starts_with(prefix)) return false;
  const long pid = std::atol(name.c_str() + prefix.size());
  return pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::vector<std::string> remove_stale_store_dirs() {
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (!left_by_dead_controller(name, kStoreDirPrefix) || !entry.is_directory(error)) continue;
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) removed.push_back(entry.path().string());
  }
  return removed;
}

StoreDir::StoreDir() {
  // The controller's pid in the name: a later `laconic run` removes the directories of
  // controllers that died before they could (remove_stale_store_dirs).
  std::string pattern =
      (std::filesystem::temp_directory_path() / str_cat(kStoreDirPrefix, ::getpid(), "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw Error(str_cat("cannot create a rendezvous directory from '", pattern, "': ", std::strerror(errno)));
  path_ = pattern;
}

StoreDir::~StoreDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace laconic::controller
