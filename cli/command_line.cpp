#include "cli/command_line.hpp"

namespace laconic::cli {

const CLI::Validator& positive() {
  static const CLI::Validator kPositive(
      [](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          if (std::stod(text, &used) > 0 && used == text.size()) return "";
        } catch (const std::exception&) {
          // not a number: said below
        }
        return "must be a number greater than 0, got " + text;
      },
      "POSITIVE");
  return kPositive;
}

// Each command's --db has a variable of its own: CLI11 fills an option from LACONIC_DB in
// commands that were not invoked too, and one shared variable let that override the --db of the
// command that was (issue 29).
void add_db_option(CLI::App* command, std::string& db) {
  db = "laconic.db";
  command->add_option("--db", db, "SQLite database of experiments, runs and metrics")->envname("LACONIC_DB");
}

void tidy_help_defaults(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_default_str().empty() || option->get_default_str() == "[]") option->default_str("");
  for (CLI::App* command : app.get_subcommands({})) tidy_help_defaults(*command);
}

}  // namespace laconic::cli
