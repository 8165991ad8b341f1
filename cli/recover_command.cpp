#include "cli/recover_command.hpp"

#include <iostream>

#include "engine/core/error.hpp"
#include "storage/journal.hpp"

namespace laconic::cli {

int recover_command(const std::string& journal_path, const std::string& db_path) {
  const storage::Journal journal = storage::read_journal(journal_path);
  const std::string database = db_path.empty() ? journal.database : db_path;
  auto db = storage::Database::open(database);
  const std::size_t rows = storage::replay_journal(*db, journal, journal_path);
  storage::mark_replayed(journal_path);
  std::cout << "replayed " << journal_path << " into " << database << ": " << rows << " metric rows, "
            << journal.statuses.size() << " run statuses, " << journal.facts.size() << " facts (the journal is now "
            << journal_path << ".replayed)\n";
  return 0;
}

void replay_journals(storage::Database& db, const std::string& database) {
  for (const auto& path : storage::find_journals(database)) {
    const storage::Journal journal = storage::read_journal(path);
    try {
      const std::size_t rows = storage::replay_journal(db, journal, path);
      std::cout << "laconic: replayed the recovery journal " << path << ": " << rows << " metric rows, "
                << journal.statuses.size() << " run statuses, " << journal.facts.size() << " facts\n";
    } catch (const ConfigError& e) {
      // Replayed before (by `laconic recover`, whose rename failed): nothing left to do.
      if (std::string(e.what()).find("was already replayed") == std::string::npos) throw;
    }
    storage::mark_replayed(path);
  }
}

}  // namespace laconic::cli
