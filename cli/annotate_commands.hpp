#pragma once
// `laconic tag` and `laconic note`: what a user writes about runs. The only commands besides
// `run` (and recover, merge) that write to a database; they never touch a metric.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::cli {

/// `laconic tag RUN... TAG`: adds the last word of `runs_and_tag` as a tag to the runs the others
/// name (or removes it, with `remove`) and says what it did. ConfigError for a missing database, a
/// word that is not a run id, an unknown run or a malformed tag.
int tag_command(const std::string& db, const std::vector<std::string>& runs_and_tag, bool remove);

/// Sets the run's note ("" clears it).
int note_command(const std::string& db, std::int64_t run, const std::string& note);

}  // namespace laconic::cli
