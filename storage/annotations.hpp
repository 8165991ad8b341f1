#pragma once
// What users write about runs: tags and a note (`laconic tag`, `laconic note`). The only writes
// outside `laconic run`; they touch run_tags and runs.note, never a metric.
#include <cstdint>
#include <string>
#include <vector>

#include "storage/database.hpp"

namespace laconic::storage {

/// Adds `tag` to every run of `runs` (a run that has it already keeps it), in one transaction.
/// ConfigError, with nothing written, for an unknown run id (naming the ids that exist) or a tag
/// that is empty or holds other than letters, digits and - _ . : + /.
void add_tag(Database& db, const std::vector<std::int64_t>& runs, const std::string& tag);

/// Removes `tag` from every run of `runs`; returns how many had it. ConfigError for an unknown run id.
std::int64_t remove_tag(Database& db, const std::vector<std::int64_t>& runs, const std::string& tag);

/// Sets the run's note ("" clears it). ConfigError for an unknown run id.
void set_note(Database& db, std::int64_t run, const std::string& note);

/// The run's tags, sorted.
std::vector<std::string> tags_of(Database& db, std::int64_t run);

/// Every tag in use with how many runs have it, sorted by tag.
std::vector<std::pair<std::string, std::int64_t>> tags_in_use(Database& db);

}  // namespace laconic::storage
