#pragma once
// SQLite's file format read directly, page by page (https://www.sqlite.org/fileformat2.html), for
// what SQLite itself will not read: the rows on the leaf pages of a b-tree whose interior pages
// are damaged, or of a file whose first page (the header and the schema's root) is gone. Used by
// `laconic recover --from-damaged` (storage/leaf_salvage.hpp); it never writes.
//
// The committed frames of a `-wal` file beside it are read over the main file's pages, as SQLite
// would (frames whose salts and checksums hold, up to the last commit frame), and so are those
// after a damaged frame, which SQLite drops (scan_wal).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace laconic::storage::pages {

/// One value of a record, as the file stores it.
struct Value {
  enum class Type { Null, Integer, Real, Text, Blob };
  Type type = Type::Null;
  std::int64_t integer = 0;
  double real = 0;
  std::string bytes;  ///< text or blob
};

/// A b-tree page's kind (its first byte).
enum class PageType : std::uint8_t { IndexInterior = 2, TableInterior = 5, IndexLeaf = 10, TableLeaf = 13 };

/// A well-formed b-tree page: its kind, its cells' offsets in the page, and (interior pages) its
/// children, the right-most last.
struct BtreePage {
  PageType type = PageType::TableLeaf;
  std::vector<std::uint32_t> cell_offsets;
  std::vector<std::uint32_t> children;
  bool leaf() const { return type == PageType::TableLeaf || type == PageType::IndexLeaf; }
  /// Its cells hold records: leaves, and an index's interior pages (whose keys are rows too).
  bool holds_records() const { return type != PageType::TableInterior; }
  bool index() const { return type == PageType::IndexLeaf || type == PageType::IndexInterior; }
};

/// A leaf cell read back: its rowid (table leaves) and the record's values.
struct Cell {
  std::int64_t rowid = 0;
  std::vector<Value> values;
};

/// A `-wal` file's frames of its current generation (the salts of its header), each checked
/// against the checksum the frame before it states (the header's for the first): SQLite's chain
/// stops at the first frame that fails, so a damaged frame hides every valid one after it.
struct WalScan {
  std::uint32_t page_size = 0;       ///< 0: no WAL, or not one
  std::uint64_t valid_frames = 0;    ///< frames whose checksum holds
  std::uint64_t sqlite_frames = 0;   ///< of them, those before the first that fails: what SQLite reads
  std::uint64_t damaged_frames = 0;  ///< frames that fail their checksum with a valid commit after them
  std::uint64_t first_damaged = 0;   ///< the first of those, from 1; 0 when none
  bool damaged() const { return damaged_frames > 0; }
};

/// One valid frame: its page, its commit's page count (0 for a frame that commits nothing), where
/// its page's data lies in the file, and whether SQLite reads it.
struct WalFrame {
  std::uint32_t page = 0;
  std::uint32_t commit = 0;
  std::uint64_t data_offset = 0;
  bool read_by_sqlite = false;
};

/// Scans the WAL `wal_path` (nothing when there is none or it is not a WAL).
WalScan scan_wal(const std::string& wal_path);

class SqliteFile {
 public:
  /// Opens `path` read-only; StorageError when it cannot be read. The page size is the header's
  /// when the header is whole, else the size under which most pages read as b-tree pages.
  explicit SqliteFile(const std::string& path);
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  bool header_valid() const { return header_valid_; }
  std::uint32_t page_size() const { return page_size_; }
  std::uint32_t usable_size() const { return usable_size_; }
  std::uint32_t page_count() const { return page_count_; }
  std::size_t wal_pages() const { return wal_frames_.size(); }
  /// The -wal beside it, as read (frames after a damaged one included).
  const WalScan& wal_scan() const { return wal_scan_; }

  /// Page `number` (from 1) as the file (and its committed WAL frames) hold it; empty when it is
  /// not there (beyond a truncated file).
  std::span<const std::uint8_t> page(std::uint32_t number);

  /// The page as a b-tree page, or nothing when it is not a well-formed one.
  std::optional<BtreePage> btree_page(std::uint32_t number);

  /// The records of a page that holds them (holds_records) that read back whole, their overflow
  /// chains included; `bad` counts those that did not.
  std::vector<Cell> records(std::uint32_t number, const BtreePage& page, std::int64_t& bad);

  /// The freelist's pages (trunks and leaves), as far as its chain reads; empty without a header.
  std::vector<std::uint32_t> freelist_pages();

 private:
  bool read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  void read_wal(const std::string& path);
  std::uint32_t guess_page_size();
  std::optional<std::string> payload(std::span<const std::uint8_t> page, std::uint32_t at, std::uint64_t size,
                                     bool index);

  int fd_ = -1, wal_fd_ = -1;
  std::uint64_t file_size_ = 0;
  bool header_valid_ = false;
  std::uint32_t page_size_ = 4096, usable_size_ = 4096, page_count_ = 0;
  std::map<std::uint32_t, std::uint64_t> wal_frames_;  ///< page -> offset of its last committed frame's data
  WalScan wal_scan_;
  std::uint32_t cached_number_ = 0;
  std::vector<std::uint8_t> cached_;
};

/// A record's values (the bytes of a cell's payload); nothing when they do not parse.
std::optional<std::vector<Value>> decode_record(std::span<const std::uint8_t> record);

}  // namespace laconic::storage::pages
