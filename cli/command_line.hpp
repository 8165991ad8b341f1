#pragma once
// The command line of `laconic`: every command declares its own subcommand, options and handler
// (cli/read_command_line.cpp: the commands that read results; cli/engine_command_line.cpp: run,
// worker, list and check), and cli/main.cpp parses and runs the one invoked.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace laconic::cli {

/// A command as declared: its subcommand, what runs it once the line is parsed (returning the
/// exit status), and the database its storage errors are about.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
  std::function<std::string()> database = [] { return std::string("laconic.db"); };
};

using Commands = std::vector<Command>;

/// A number greater than 0 (CLI11's PositiveNumber says "Value 0 not in range 2.22507e-308 to
/// 1.79769e+308").
const CLI::Validator& positive();

/// `--db PATH` on `command` (LACONIC_DB when not given; a flag always wins), into `db`.
void add_db_option(CLI::App* command, std::string& db);

/// Leaves empty defaults ("" or an empty list) out of --help, where CLI11 would print "=[]".
void tidy_help_defaults(CLI::App& app);

/// The commands that read results: runs, show, compare, query, export, best, report, tag, note,
/// recover, merge.
void add_read_commands(CLI::App& app, Commands& commands);

}  // namespace laconic::cli
