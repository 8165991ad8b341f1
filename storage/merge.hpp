#pragma once
// `laconic merge OUT.db IN.db...`: the runs of several databases (the shards of a sweep run with
// `laconic run --shard I/N` on different machines) gathered into one. docs/multi-host.md.
#include <cstdint>
#include <string>
#include <vector>

#include "storage/database.hpp"

namespace laconic::storage {

/// What merging one database did. Nothing is dropped without a line saying so.
struct MergeReport {
  std::int64_t experiments_added = 0;
  std::int64_t runs_added = 0;
  std::int64_t metric_rows_added = 0;
  /// Runs already in the target, copied by an earlier merge of this source: not added again.
  std::vector<std::string> duplicates;
  /// Runs of the same experiment, name and configuration as one in the target but recorded
  /// apart (both shards ran it): added as another attempt, so both are kept.
  std::vector<std::string> conflicts;
  /// Runs that had not ended (QUEUED, RUNNING): not added; merge again once their shard is done.
  std::vector<std::string> skipped;
};

/// Copies every ended run of the database at `source` into `target`, with its metrics, summary
/// and facts, under new ids: experiments are matched by name and file hash, metric names by
/// name. Runs are matched by experiment, name, configuration and creation time, so merging the
/// same source twice adds nothing. Copied runs lose their controller's process id and
/// checkpoint step (both belong to the machine that ran them). One transaction: all or nothing.
/// StorageError or ConfigError (the source is missing, not a laconic database, or `target`
/// itself).
MergeReport merge_database(Database& target, const std::string& source);

}  // namespace laconic::storage
