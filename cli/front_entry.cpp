// laconic's EngineCommands: this binary does not link LibTorch, so the read commands start at
// once; the commands that train or need the engine's catalog run in laconic-engine, exec'd with
// the same arguments (and so the same pid: a controller's runs.controller_pid stays right).
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/engine_command_line.hpp"
#include "controller/pinned_threads.hpp"

namespace laconic::cli {
namespace {

std::string engine_path(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  const std::string self = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(argv0);
  return self.substr(0, self.rfind('/') + 1) + "laconic-engine";
}

// Replaces this process by laconic-engine. Returns only on failure.
int exec_engine(char** argv) {
  const std::string engine = engine_path(argv[0]);
  argv[0] = const_cast<char*>(engine.c_str());
  ::execv(engine.c_str(), argv);
  std::cerr << "laconic: cannot start " << engine << ": " << std::strerror(errno)
            << " (run, worker, check and list live in that binary, built next to laconic)\n";
  return 1;
}

}  // namespace

EngineCommands engine_commands(char** argv) {
  return {
      .run =
          [argv](RunCommandLine&) {
            // A controller's workers are its forks: one thread each for OpenMP and BLAS, which size
            // their pools when LibTorch is loaded, before laconic-engine's main()
            // (docs/architecture.md).
            for (const char* name : controller::kPinnedThreadVariables) ::setenv(name, "1", 1);
            return exec_engine(argv);
          },
      .worker = [argv](const controller::WorkerArgs&) { return exec_engine(argv); },
      .list = [argv](const ListArgs&) { return exec_engine(argv); },
      .check = [argv](const CheckArgs&) { return exec_engine(argv); },
      .advise =
          [argv](advise::AdviseOptions&) {
            for (const char* name : controller::kPinnedThreadVariables) ::setenv(name, "1", 1);  // as for run
            return exec_engine(argv);
          },
  };
}

int leave(int status) { return status; }

}  // namespace laconic::cli
