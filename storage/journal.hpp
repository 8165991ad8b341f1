#pragma once
// The recovery journal: what the controller could not write to the database before it gave up
// waiting for it (locked for too long, a full disk, a file turned read-only). One text file per
// give-up, next to the database or, when that directory cannot take it, in TMPDIR. `laconic
// recover JOURNAL` (and `laconic run --resume`) replays it into the database exactly once: in one
// transaction that also records its id in replayed_journals.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/metrics.hpp"
#include "storage/database.hpp"

namespace laconic::storage {

struct Journal {
  std::string id;        ///< unique per journal: "<unix seconds>-<pid>"
  std::string database;  ///< the database it belongs to, its absolute path (new_journal)

  struct Rows {
    std::int64_t run_id = 0;
    std::vector<MetricRecord> records;  ///< not yet committed, in recording order
  };
  struct Status {
    std::int64_t run_id = 0;
    std::string status;  ///< a final status: FINISHED, FAILED, KILLED, DIVERGED
    double ended = 0;    ///< unix seconds
    std::string error;   ///< "" for none
  };
  struct Fact {
    std::int64_t run_id = 0;
    std::string key, value;
  };
  std::vector<Rows> metrics;
  std::vector<Status> statuses;
  std::vector<Fact> facts;

  bool empty() const { return metrics.empty() && statuses.empty() && facts.empty(); }
  /// Metric rows it holds.
  std::size_t rows() const;
};

/// A new journal for `database`, with a fresh id.
Journal new_journal(const std::string& database);

/// Writes `journal` atomically (a temporary file, fsync, rename) as DATABASE.journal-ID next to
/// the database, or, when that fails (a full disk, a read-only directory), as
/// TMPDIR/laconic-journal-HASH-ID (HASH: of the database's absolute path). Returns the path.
/// StorageError when neither place takes it, naming both and why.
std::string write_journal(const Journal& journal);

/// Reads a journal; ConfigError naming the file for a missing, malformed or truncated one.
Journal read_journal(const std::string& path);

/// Replays `journal` into `db` in one transaction: the metric rows (with their run_summary
/// rows), the final statuses and the facts, and its id in replayed_journals. Returns the metric
/// rows written. ConfigError when this journal was replayed into `db` before (naming when), or
/// when a run it names is not in `db` (the wrong --db).
std::size_t replay_journal(Database& db, const Journal& journal, const std::string& path);

/// The journals of `database` not yet marked replayed, found next to it and in TMPDIR, oldest
/// first.
std::vector<std::string> find_journals(const std::string& database);

/// Marks a replayed journal file so find_journals() passes it by: renames it to PATH.replayed.
void mark_replayed(const std::string& path);

}  // namespace laconic::storage
