#pragma once
// `laconic recover --from-damaged X.db OUT.db`: what can still be read of a damaged database,
// copied into a new one. Debian 12's sqlite3 (3.40.1) cannot do it for laconic's files: its
// `.recover` stops with "SQL logic error" on any of them, damaged or not, and `.dump` rolls back
// everything at the first damaged page.
#include <cstdint>
#include <string>
#include <vector>

namespace laconic::storage {

/// What a salvage copied.
struct SalvageReport {
  /// Rows copied per table, in the order copied ("runs", 12).
  std::vector<std::pair<std::string, std::int64_t>> copied;
  /// Tables whose reading stopped at a damaged page before their end: "metric_values (rows up to
  /// id 40211 and from id 40377 on)".
  std::vector<std::string> damaged;
  std::int64_t summaries_rebuilt = 0;  ///< runs whose run_summary rows were computed again
  /// Rows read off leaf pages that SQL could not reach (storage/leaf_salvage.hpp), per table,
  /// included in `copied`; empty when SQL read every table to its end.
  std::vector<std::pair<std::string, std::int64_t>> from_leaf_pages;
  std::int64_t leaf_pages = 0;        ///< leaf pages read directly
  std::int64_t damaged_pages = 0;     ///< pages the trees point to that are not b-tree pages
  std::int64_t unreadable_cells = 0;  ///< rows on leaf pages read that did not read back
  bool schema_lost = false;           ///< the schema could not be read: every table read off its leaf pages
  /// Ended runs whose metric rows did not all survive (fewer than the damaged file's run_summary
  /// counted, or none at all): marked KILLED with what survived as their error, so that listings
  /// say so and `laconic run --resume` trains them again. "run 2 (3470 of 5950 metric rows)".
  std::vector<std::string> incomplete;
  /// How the -wal beside it was damaged and what was read past the damage; "" when it was not.
  std::string wal_damage;
};

/// Copies every row of `damaged` that can still be read into a new laconic database at `out`:
/// each table's rows in the order of their ids up to the first damaged page, then from the end
/// back down to the next; then, for a table SQL could not read to its end (or every table, when
/// the schema cannot be read), the rows on its leaf pages, read directly from the file, whatever
/// its interior pages hold, so that only the rows on damaged leaf pages are lost; run_summary is
/// computed again from the metrics copied. `damaged` is opened read-only and never written.
/// ConfigError when `out` exists already or `damaged` is missing; StorageError naming `damaged`
/// when not even its schema can be read (or it is not SQLite). A recovery that fails leaves no
/// `out` behind, so it can be tried again.
SalvageReport salvage_database(const std::string& damaged, const std::string& out);

}  // namespace laconic::storage
