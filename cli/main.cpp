// laconic and laconic-engine: the command-line entry point (cli/CMakeLists.txt links it into both
// with their own EngineCommands). Parses the command line, runs the command invoked, and turns any
// error into one clear message and a non-zero exit status.
#include <iostream>

#include "cli/command_line.hpp"
#include "cli/engine_command_line.hpp"
#include "cli/version.hpp"
#include "engine/core/error.hpp"
#include "storage/database.hpp"

namespace {

using laconic::cli::Command;

// The command invoked, once the line is parsed; its status, 2 for the user's errors.
int run_invoked(const laconic::cli::Commands& commands) {
  const Command* invoked = nullptr;
  for (const Command& command : commands)
    if (*command.app) invoked = &command;
  if (invoked == nullptr) return 0;
  try {
    return invoked->run();
  } catch (const laconic::ConfigError& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 2;
  } catch (const laconic::StoppedError& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 130;
  } catch (const laconic::StorageError& e) {
    // The file, what went wrong in words and what to do; not the SQL that failed.
    std::cerr << "laconic: " << laconic::storage::explain_storage_error(e.code(), e.what(), invoked->database())
              << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "laconic: " << e.what() << "\n";
    return 1;
  }
}

int dispatch(int argc, char** argv) {
  CLI::App app{
      "laconic: a testbed for communication-efficient distributed deep learning.\n"
      "Experiments are Lua files; results go to a SQLite database."};
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  app.set_version_flag("--version", laconic::cli::version_text(),
                       "print laconic's version and git description, and the versions of LibTorch, Gloo, Lua and "
                       "SQLite, then exit");
  const laconic::cli::EngineCommands engine = laconic::cli::engine_commands(argv);
  laconic::cli::Commands commands;
  laconic::cli::add_run_commands(app, commands, engine);
  laconic::cli::add_advise_command(app, commands, engine);
  laconic::cli::add_read_commands(app, commands);
  laconic::cli::add_catalog_commands(app, commands, engine);
  laconic::cli::tidy_help_defaults(app);
  // A bad flag is the user's error like any other: exit 2 (CLI11's own codes are 100 and up).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run_invoked(commands);
}

}  // namespace

int main(int argc, char** argv) { return laconic::cli::leave(dispatch(argc, argv)); }
