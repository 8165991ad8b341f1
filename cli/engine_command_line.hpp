#pragma once
// The commands that need the engine (run, worker, list, check): declared, with their options, in
// both binaries, since `laconic` parses every command line before it execs `laconic-engine` for
// these (docs/architecture.md); what runs them is the binary's own (EngineCommands).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/advise_command.hpp"
#include "cli/catalog_commands.hpp"
#include "cli/command_line.hpp"
#include "controller/launch_environment.hpp"
#include "controller/run_sweep.hpp"
#include "controller/worker_args.hpp"

namespace laconic::cli {

/// `laconic run`'s command line.
struct RunCommandLine {
  controller::SweepOptions run;
  controller::LaunchFlags launch;
  bool single_host = false;  ///< ignore a launcher's variables
  std::int64_t repeat = 0;   ///< --repeat N: runs_per_seed = N; 0 = not given
};

struct ListArgs {
  std::string kind;  ///< "" = every kind; plural or singular ("compressors")
  bool markdown = false;
};

struct CheckArgs {
  std::string file, only;
  std::string db;  ///< --db, refused with an explanation: check reads no database
  std::vector<std::string> overrides;
  CheckListing listing = CheckListing::Summary;
};

/// What runs the engine's commands in this binary: laconic-engine's own code, or in `laconic` an
/// exec of laconic-engine with the same arguments.
struct EngineCommands {
  std::function<int(RunCommandLine&)> run;
  std::function<int(const controller::WorkerArgs&)> worker;
  std::function<int(const ListArgs&)> list;
  std::function<int(const CheckArgs&)> check;
  std::function<int(advise::AdviseOptions&)> advise;
};

/// Declares run and worker (hidden: a run's own processes).
void add_run_commands(CLI::App& app, Commands& commands, const EngineCommands& engine);
/// Declares advise.
void add_advise_command(CLI::App& app, Commands& commands, const EngineCommands& engine);
/// Declares list and check.
void add_catalog_commands(CLI::App& app, Commands& commands, const EngineCommands& engine);

/// This binary's EngineCommands (cli/engine_entry.cpp in laconic-engine, cli/front_entry.cpp in
/// laconic); `argv` is the process's command line.
EngineCommands engine_commands(char** argv);

/// Ends the process with `status` once the command has returned (laconic-engine leaves without
/// LibTorch's static destructors); returns it where the process may end normally.
int leave(int status);

}  // namespace laconic::cli
