#pragma once
// `laconic recover JOURNAL`: replays a recovery journal (storage/journal.hpp) into its database.
#include <string>

#include "storage/database.hpp"

namespace laconic::cli {

/// Replays `journal` into `db` (default: the database the journal names) exactly once, prints
/// what it wrote, and renames the journal to JOURNAL.replayed. ConfigError (exit 2) for a
/// journal replayed before, one of another database, or a damaged one.
int recover_command(const std::string& journal, const std::string& db);

/// `laconic recover --from-damaged DAMAGED OUT`: copies what can still be read of a damaged
/// database into the new file OUT (storage/salvage.hpp) and says what it copied and lost.
int salvage_command(const std::string& damaged, const std::string& out);

}  // namespace laconic::cli
