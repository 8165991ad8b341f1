#include "cli/annotate_commands.hpp"

#include <filesystem>
#include <iostream>

#include "engine/core/error.hpp"
#include "storage/annotations.hpp"
#include "storage/database.hpp"

namespace laconic::cli {
namespace {

// Tags and notes are about runs already recorded: a database that is not there is a mistake,
// not one to create.
std::unique_ptr<storage::Database> open_existing(const std::string& path) {
  if (path != ":memory:" && !std::filesystem::exists(path))
    throw ConfigError(str_cat("database ", path, " does not exist; give --db PATH (or set LACONIC_DB)"));
  return storage::Database::open(path);
}

std::string ids_text(const std::vector<std::int64_t>& runs) {
  std::string out;
  for (std::int64_t id : runs) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// The run ids of `laconic tag RUN... TAG`: every word but the last.
std::vector<std::int64_t> run_ids(const std::vector<std::string>& runs_and_tag) {
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i + 1 < runs_and_tag.size(); ++i) {
    const std::string& word = runs_and_tag[i];
    std::size_t used = 0;
    std::int64_t id = 0;
    try {
      id = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || id <= 0)
      throw ConfigError(str_cat("laconic tag RUN... TAG: '", word,
                                "' is not a run id (laconic runs lists them); the tag comes last"));
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

int tag_command(const std::string& db, const std::vector<std::string>& runs_and_tag, bool remove) {
  const std::vector<std::int64_t> runs = run_ids(runs_and_tag);
  const std::string& tag = runs_and_tag.back();
  auto database = open_existing(db);
  if (remove) {
    const std::int64_t removed = storage::remove_tag(*database, runs, tag);
    std::cout << "removed tag '" << tag << "' from " << removed << " of " << runs.size() << " runs (" << ids_text(runs)
              << ")\n";
    return 0;
  }
  storage::add_tag(*database, runs, tag);
  std::cout << "tagged run" << (runs.size() == 1 ? " " : "s ") << ids_text(runs) << " '" << tag
            << "' (laconic runs --tag " << tag << " lists them)\n";
  return 0;
}

int note_command(const std::string& db, std::int64_t run, const std::string& note) {
  auto database = open_existing(db);
  storage::set_note(*database, run, note);
  std::cout << (note.empty() ? "cleared the note of run " : "noted run ") << run << "\n";
  return 0;
}

}  // namespace laconic::cli
