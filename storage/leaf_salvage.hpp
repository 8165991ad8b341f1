#pragma once
// The rows SQL cannot reach in a damaged laconic database, read off its leaf pages
// (storage/sqlite_pages.hpp), the way SQLite's own recovery does: a damaged interior page, or a
// damaged first page (the header and the schema), hides the leaf pages below it from every
// query, though they are whole. Part of `laconic recover --from-damaged` (storage/salvage.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "storage/database.hpp"

namespace laconic::storage {

/// What reading the leaf pages found.
struct LeafSalvage {
  /// Rows added per table (beyond those already copied), in the order of `tables`.
  std::vector<std::pair<std::string, std::int64_t>> rows;
  std::int64_t leaf_pages = 0;        ///< pages of `tables` read (leaves, and an index's interior pages)
  std::int64_t damaged_pages = 0;     ///< pages a tree points to that are not b-tree pages
  std::int64_t unreadable_cells = 0;  ///< cells on the pages read that did not read back
  /// Rows off every tree on a page that two tables' shapes fit equally well, or on a table's own
  /// tree that its shape does not fit: left out.
  std::int64_t unmatched_cells = 0;
};

/// Adds to `to` the rows of `tables` (laconic's tables, as `to`'s schema declares them) that lie
/// on leaf pages of the file at `path`: every leaf of each of those tables' b-trees, walked page
/// by page from its root (`roots`: every table's and index's root page in the damaged file's
/// schema; empty when the schema cannot be read), and every leaf page that no tree reaches and
/// that is not on the freelist. A page found off every tree goes to the one table or index whose
/// shape all its rows fit best (columns in order, their types, NOT NULL; an integer fits a REAL
/// column less well than an INTEGER one); only the pages of `tables` are copied. A row whose id (or
/// key) `to` holds already is left as it is: the rows SQL copied first stand. A WITHOUT ROWID
/// table's interior pages hold rows too, and are read as its leaves are.
LeafSalvage salvage_leaf_pages(const std::string& path, Database& to, const std::vector<std::string>& tables,
                               const std::map<std::string, std::uint32_t>& roots);

}  // namespace laconic::storage
