// laconic-engine's own EngineCommands: the commands that need the engine run here.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <iostream>

#include "cli/engine_command_line.hpp"
#include "cli/libstdcxx_first.hpp"
#include "controller/worker_command.hpp"

namespace laconic::cli {
namespace {

// Signal handlers can only reach a global; this one flag is the controller's "stop" request.
std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop = true; }

std::string self_executable(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  return std::string(buf, static_cast<std::size_t>(n));
}

// "compressors" and "topologies" name the same kinds as "compressor" and "topology".
std::string singular(std::string kind) {
  if (kind.size() > 3 && kind.ends_with("ies")) return kind.substr(0, kind.size() - 3) + "y";
  if (kind.size() > 1 && kind.ends_with("s")) return kind.substr(0, kind.size() - 1);
  return kind;
}

int run(RunCommandLine& line, const std::string& executable) {
  struct sigaction action {};
  action.sa_handler = request_stop;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  controller::SweepOptions& args = line.run;
  if (line.repeat > 0) args.overrides.push_back("runs_per_seed=" + std::to_string(line.repeat));
  if (args.dry_run) return check_command(args.file, args.only, CheckListing::Summary, args.overrides);
  if (!line.single_host) args.launched = controller::detect_launch(controller::process_environment(), line.launch);
  args.executable = executable;
  return controller::run_sweep(args, g_stop);
}

int advise(advise::AdviseOptions& args, const std::string& executable) {
  struct sigaction action {};
  action.sa_handler = request_stop;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  args.executable = executable;
  return advise_command(args, g_stop);
}

}  // namespace

EngineCommands engine_commands(char** argv) {
  put_libstdcxx_first(argv);  // LibTorch's copies of libstdc++'s functions must not win (libstdcxx_first.hpp)
  const std::string executable = self_executable(argv[0]);
  return {
      .run = [executable](RunCommandLine& line) { return run(line, executable); },
      .worker = controller::worker_command,
      .list = [](const ListArgs& a) { return a.markdown ? list_markdown_command() : list_command(singular(a.kind)); },
      .check = [](const CheckArgs& a) { return check_command(a.file, a.only, a.listing, a.overrides, a.db); },
      .advise = [executable](advise::AdviseOptions& a) { return advise(a, executable); },
  };
}

int leave(int status) {
  // LibTorch's static destructors deregister each of its thousands of operators, about 0.2 s at
  // every exit of laconic-engine. All of laconic's own resources (databases, files, namespaces,
  // worker processes) were released when the command returned, so the engine leaves without them.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status);
}

}  // namespace laconic::cli
