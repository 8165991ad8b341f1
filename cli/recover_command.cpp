#include "cli/recover_command.hpp"

#include <filesystem>
#include <iostream>

#include "engine/core/error.hpp"
#include "storage/database.hpp"
#include "storage/journal.hpp"
#include "storage/salvage.hpp"

namespace laconic::cli {

int recover_command(const std::string& journal_path, const std::string& db_path) {
  // Checked before anything is read or opened: a --db that is not there is a typo, not a new file.
  if (!db_path.empty() && !std::filesystem::exists(db_path))
    throw ConfigError(str_cat("--db ", db_path, " does not exist: a journal is replayed into the database it was ",
                              "written for (leave --db out) or one that holds its runs"));
  const storage::Journal journal = storage::read_journal(journal_path);
  const std::string database = db_path.empty() ? journal.database : db_path;
  std::size_t rows = 0;
  try {
    auto db = storage::Database::open(database);
    rows = storage::replay_journal(*db, journal, journal_path);
  } catch (const StorageError& e) {
    // Named by the database the journal is replayed into, not the --db default (laconic.db).
    throw StorageError(storage::explain_storage_error(e.code(), e.what(), database), e.code());
  }
  storage::mark_replayed(journal_path);
  std::cout << "replayed " << journal_path << " into " << database << ": " << rows << " metric rows, "
            << journal.statuses.size() << " run statuses, " << journal.facts.size() << " facts (the journal is now "
            << journal_path << ".replayed)\n";
  return 0;
}

int salvage_command(const std::string& damaged, const std::string& out) {
  const storage::SalvageReport report = storage::salvage_database(damaged, out);
  std::cout << "recovered what could be read of " << damaged << " into " << out << ":";
  for (const auto& [table, rows] : report.copied) std::cout << " " << rows << " " << table << ",";
  std::cout << " run_summary computed again for " << report.summaries_rebuilt << " runs\n";
  for (const std::string& run : report.incomplete)
    std::cout << "lost rows of " << run << ": marked KILLED, so that laconic run --resume trains it again\n";
  if (!report.wal_damage.empty()) std::cout << report.wal_damage << "\n";
  if (report.damaged.empty() && !report.schema_lost && report.incomplete.empty() && report.wal_damage.empty()) {
    std::cout << "every row was read: nothing was lost\n";
  } else {
    for (const auto& line : report.damaged) std::cout << "SQL stopped at damaged pages of " << line << "\n";
    if (report.schema_lost)
      std::cout << "the schema of " << damaged << " could not be read (its first page is damaged): every table was "
                << "read off its leaf pages, each row put in the one table whose columns it fits\n";
    std::cout << "read " << report.leaf_pages << " leaf pages directly:";
    for (const auto& [table, rows] : report.from_leaf_pages) std::cout << " " << rows << " more " << table << ",";
    std::cout << " " << report.unreadable_cells << " rows on them unreadable\n";
    if (report.damaged_pages == 0)
      std::cout << "no page the tables point to is damaged\n";
    else
      std::cout << report.damaged_pages << (report.damaged_pages == 1 ? " page" : " pages")
                << " the tables point to could not be read (the rows of a damaged leaf page are lost; an interior "
                   "page of metric_values holds none)\n";
  }
  std::cout << "use it with --db " << out << " (laconic runs --db " << out << ")\n";
  return 0;
}

}  // namespace laconic::cli
