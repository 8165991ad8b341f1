#include "storage/sqlite_pages.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <functional>
#include <set>

#include "engine/core/error.hpp"

namespace laconic::storage::pages {
namespace {

constexpr char kMagic[] = "SQLite format 3";  // and a NUL: 16 bytes
constexpr std::uint32_t kWalMagic = 0x377f0682;

std::uint32_t be16(const std::uint8_t* p) { return (std::uint32_t{p[0]} << 8) | p[1]; }
std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// A varint at `at` (at most 9 bytes, never past `end`); the bytes it took in `used`, 0 when cut off.
std::uint64_t varint(std::span<const std::uint8_t> bytes, std::size_t at, std::size_t& used) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    if (at + i >= bytes.size()) {
      used = 0;
      return 0;
    }
    const std::uint8_t b = bytes[at + i];
    if (i == 8) {
      used = 9;
      return (v << 8) | b;
    }
    v = (v << 7) | (b & 0x7f);
    if ((b & 0x80) == 0) {
      used = i + 1;
      return v;
    }
  }
  used = 0;
  return 0;
}

// Bytes of a value of serial type `type`; -1 for the reserved types 10 and 11.
std::int64_t serial_size(std::uint64_t type) {
  static constexpr std::int64_t kSizes[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
  if (type < 12) return kSizes[type];
  return static_cast<std::int64_t>((type - (type % 2 == 0 ? 12 : 13)) / 2);
}

Value read_value(std::uint64_t type, const std::uint8_t* p, std::int64_t size) {
  Value v;
  if (type == 0) return v;
  if (type == 8 || type == 9) {
    v.type = Value::Type::Integer;
    v.integer = type == 9 ? 1 : 0;
    return v;
  }
  if (type <= 7) {
    std::uint64_t raw = 0;
    for (std::int64_t i = 0; i < size; ++i) raw = (raw << 8) | p[i];
    if (type == 7) {
      v.type = Value::Type::Real;
      v.real = std::bit_cast<double>(raw);
      return v;
    }
    const int shift = 64 - 8 * static_cast<int>(size);  // sign-extend the big-endian integer
    v.type = Value::Type::Integer;
    v.integer = static_cast<std::int64_t>(raw << shift) >> shift;
    return v;
  }
  v.type = type % 2 == 0 ? Value::Type::Blob : Value::Type::Text;
  v.bytes.assign(reinterpret_cast<const char*>(p), static_cast<std::size_t>(size));
  return v;
}

// The WAL's checksum over `words` (pairs of 32-bit words in the WAL's byte order), from (s0, s1).
void wal_checksum(const std::uint8_t* data, std::size_t bytes, bool big_endian, std::uint32_t& s0, std::uint32_t& s1) {
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    std::uint32_t x0, x1;
    if (big_endian) {
      x0 = be32(data + i);
      x1 = be32(data + i + 4);
    } else {
      std::memcpy(&x0, data + i, 4);
      std::memcpy(&x1, data + i + 4, 4);
    }
    s0 += x0 + s1;
    s1 += x1 + s0;
  }
}

}  // namespace

std::optional<std::vector<Value>> decode_record(std::span<const std::uint8_t> record) {
  std::size_t used = 0;
  const std::uint64_t header_size = varint(record, 0, used);
  if (used == 0 || header_size < used || header_size > record.size()) return std::nullopt;
  std::vector<std::uint64_t> types;
  for (std::size_t at = used; at < header_size;) {
    const std::uint64_t type = varint(record, at, used);
    if (used == 0 || serial_size(type) < 0) return std::nullopt;
    types.push_back(type);
    at += used;
  }
  std::vector<Value> values;
  std::size_t at = header_size;
  for (const std::uint64_t type : types) {
    const std::int64_t size = serial_size(type);
    if (at + static_cast<std::size_t>(size) > record.size()) return std::nullopt;
    values.push_back(read_value(type, record.data() + at, size));
    at += static_cast<std::size_t>(size);
  }
  if (at != record.size()) return std::nullopt;  // a record is exactly its header and values
  return values;
}

SqliteFile::SqliteFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw StorageError(str_cat("cannot read '", path, "': ", std::strerror(errno)), 14 /* SQLITE_CANTOPEN */);
  struct stat st {};
  ::fstat(fd_, &st);
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  std::uint8_t header[100] = {};
  if (read_at(0, header) && std::memcmp(header, kMagic, 16) == 0) {
    const std::uint32_t size = be16(header + 16) == 1 ? 65536 : be16(header + 16);
    if (size >= 512 && size <= 65536 && std::has_single_bit(size) && header[20] < size - 480) {
      header_valid_ = true;
      page_size_ = size;
      usable_size_ = size - header[20];
    }
  }
  if (!header_valid_) usable_size_ = page_size_ = guess_page_size();
  page_count_ = static_cast<std::uint32_t>(file_size_ / page_size_);
  read_wal(path + "-wal");
}

SqliteFile::~SqliteFile() {
  if (fd_ >= 0) ::close(fd_);
  if (wal_fd_ >= 0) ::close(wal_fd_);
}

bool SqliteFile::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The committed frames of the -wal beside the file, over its pages: the WAL's header and each
// frame's salts and cumulative checksum must hold; frames after the last commit are left out.
namespace {

WalScan scan_wal(int fd, std::uint32_t page_size, const std::function<void(const WalFrame&)>& on_frame) {
  WalScan scan;
  std::uint8_t header[32];
  if (::pread(fd, header, 32, 0) != 32 || (be32(header) & ~1u) != kWalMagic) return scan;
  const bool big_endian = (be32(header) & 1u) != 0;
  const std::uint32_t size = be32(header + 8);
  if ((page_size != 0 && size != page_size) || size < 512 || size > 65536) return scan;
  std::uint32_t s0 = 0, s1 = 0;
  wal_checksum(header, 24, big_endian, s0, s1);
  if (s0 != be32(header + 24) || s1 != be32(header + 28)) return scan;
  scan.page_size = size;
  std::vector<std::uint8_t> frame(24 + size);
  // Frames since the last valid commit that failed their checksum. Only a valid commit after them
  // makes them damage: the frames of a transaction that never committed (a writer killed inside
  // it, which may have rewritten its own earlier frames in place) are dropped by SQLite anyway.
  std::uint64_t invalid_run = 0;
  bool chain_whole = true;  // every frame so far checked: SQLite reads on
  std::uint64_t number = 0;
  for (std::uint64_t at = 32;; at += frame.size()) {
    if (::pread(fd, frame.data(), frame.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(frame.size())) break;
    if (std::memcmp(frame.data() + 8, header + 16, 8) != 0) break;  // salts of an older generation
    ++number;
    // Checked against the checksum the frame before states, so that one damaged frame does not
    // hide the valid ones after it (SQLite's own chain stops at the first that fails).
    wal_checksum(frame.data(), 8, big_endian, s0, s1);
    wal_checksum(frame.data() + 24, size, big_endian, s0, s1);
    const bool valid = s0 == be32(frame.data() + 16) && s1 == be32(frame.data() + 20);
    s0 = be32(frame.data() + 16);
    s1 = be32(frame.data() + 20);
    if (!valid) {
      chain_whole = false;
      ++invalid_run;
      if (scan.first_damaged == 0) scan.first_damaged = number;
      continue;
    }
    if (be32(frame.data() + 4) != 0) {  // a commit after them: damage, not an uncommitted end
      scan.damaged_frames += invalid_run;
      invalid_run = 0;
    }
    ++scan.valid_frames;
    if (chain_whole) ++scan.sqlite_frames;
    on_frame({be32(frame.data()), be32(frame.data() + 4), at + 24, chain_whole});
  }
  if (scan.damaged_frames == 0) scan.first_damaged = 0;
  return scan;
}

}  // namespace

WalScan scan_wal(const std::string& wal_path) {
  const int fd = ::open(wal_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const WalScan scan = scan_wal(fd, 0, [](const WalFrame&) {});
  ::close(fd);
  return scan;
}

void SqliteFile::read_wal(const std::string& path) {
  wal_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (wal_fd_ < 0) return;
  std::map<std::uint32_t, std::uint64_t> pending;
  std::uint32_t committed_pages = 0;
  // Every valid frame, those after a damaged one included: a recovery reads what SQLite would drop.
  wal_scan_ = scan_wal(wal_fd_, page_size_, [&](const WalFrame& f) {
    pending[f.page] = f.data_offset;
    if (f.commit != 0) {  // a commit: its pages count
      for (const auto& [page, offset] : pending) wal_frames_[page] = offset;
      pending.clear();
      committed_pages = f.commit;
    }
  });
  if (committed_pages != 0) page_count_ = committed_pages;
}

// Without a header: the page size under which the most pages are well-formed b-tree pages.
std::uint32_t SqliteFile::guess_page_size() {
  std::uint32_t best = 4096;
  std::uint32_t best_count = 0;
  for (std::uint32_t size = 512; size <= 65536; size *= 2) {
    page_size_ = usable_size_ = size;
    page_count_ = static_cast<std::uint32_t>(file_size_ / size);
    cached_number_ = 0;
    std::uint32_t count = 0;
    const std::uint32_t limit = std::min<std::uint32_t>(page_count_, 4096);
    for (std::uint32_t n = 2; n <= limit; ++n) count += btree_page(n) ? 1 : 0;
    if (count > best_count) {
      best_count = count;
      best = size;
    }
  }
  cached_number_ = 0;
  return best;
}

std::span<const std::uint8_t> SqliteFile::page(std::uint32_t number) {
  if (number == 0 || number > page_count_) return {};
  if (number == cached_number_) return cached_;
  cached_.resize(page_size_);
  bool read = false;
  if (const auto frame = wal_frames_.find(number); frame != wal_frames_.end())
    read = ::pread(wal_fd_, cached_.data(), page_size_, static_cast<off_t>(frame->second)) ==
           static_cast<ssize_t>(page_size_);
  else
    read = read_at(std::uint64_t{number - 1} * page_size_, cached_);
  cached_number_ = read ? number : 0;
  return read ? std::span<const std::uint8_t>(cached_) : std::span<const std::uint8_t>();
}

std::optional<BtreePage> SqliteFile::btree_page(std::uint32_t number) {
  const auto bytes = page(number);
  if (bytes.empty()) return std::nullopt;
  const std::uint32_t at = number == 1 ? 100 : 0;
  const std::uint8_t kind = bytes[at];
  if (kind != 2 && kind != 5 && kind != 10 && kind != 13) return std::nullopt;
  BtreePage out;
  out.type = static_cast<PageType>(kind);
  const std::uint32_t header = out.leaf() ? 8 : 12;
  const std::uint32_t cells = be16(&bytes[at + 3]);
  const std::uint32_t pointers = at + header;
  if (pointers + 2 * cells > usable_size_ || (cells == 0 && !out.leaf())) return std::nullopt;
  const std::uint32_t content = be16(&bytes[at + 5]) == 0 ? 65536 : be16(&bytes[at + 5]);
  if (content > usable_size_ || (cells > 0 && content < pointers + 2 * cells)) return std::nullopt;
  for (std::uint32_t c = 0; c < cells; ++c) {
    const std::uint32_t offset = be16(&bytes[pointers + 2 * c]);
    if (offset < content || offset + 4 > usable_size_) return std::nullopt;
    out.cell_offsets.push_back(offset);
  }
  if (!out.leaf()) {
    for (const std::uint32_t offset : out.cell_offsets) out.children.push_back(be32(&bytes[offset]));
    out.children.push_back(be32(&bytes[at + 8]));
    for (const std::uint32_t child : out.children)
      if (child < 2 || child > page_count_) return std::nullopt;
  }
  return out;
}

// A cell's payload of `size` bytes starting at `at` in `page`, with its overflow chain.
std::optional<std::string> SqliteFile::payload(std::span<const std::uint8_t> page, std::uint32_t at, std::uint64_t size,
                                               bool index) {
  const std::uint64_t u = usable_size_;
  const std::uint64_t max_local = index ? (u - 12) * 64 / 255 - 23 : u - 35;
  const std::uint64_t min_local = (u - 12) * 32 / 255 - 23;
  std::uint64_t local = size;
  if (size > max_local) {
    const std::uint64_t k = min_local + (size - min_local) % (u - 4);
    local = k <= max_local ? k : min_local;
  }
  const bool overflows = local < size;
  if (at + local + (overflows ? 4 : 0) > u) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(page.data() + at), static_cast<std::size_t>(local));
  if (!overflows) return out;
  std::uint32_t next = be32(page.data() + at + local);
  std::set<std::uint32_t> seen;
  while (out.size() < size) {
    if (next < 2 || next > page_count_ || !seen.insert(next).second) return std::nullopt;
    const auto overflow = this->page(next);  // replaces the cached page: `page` is not read again
    if (overflow.empty()) return std::nullopt;
    const std::uint64_t take = std::min<std::uint64_t>(size - out.size(), u - 4);
    out.append(reinterpret_cast<const char*>(overflow.data() + 4), static_cast<std::size_t>(take));
    next = be32(overflow.data());
  }
  return out;
}

std::vector<Cell> SqliteFile::records(std::uint32_t number, const BtreePage& layout, std::int64_t& bad) {
  std::vector<Cell> cells;
  if (!layout.holds_records()) return cells;
  const bool index = layout.index();
  const std::size_t child = layout.leaf() ? 0 : 4;  // an interior cell starts with its left child
  const auto cached = page(number);
  const std::vector<std::uint8_t> bytes(cached.begin(), cached.end());  // a copy: overflow pages reuse the cache
  if (bytes.empty()) return cells;
  for (const std::uint32_t offset : layout.cell_offsets) {
    std::size_t used = 0;
    std::size_t at = offset + child;
    const std::uint64_t size = varint(bytes, at, used);
    at += used;
    Cell cell;
    if (used != 0 && !index) {
      cell.rowid = static_cast<std::int64_t>(varint(bytes, at, used));
      at += used;
    }
    const auto body = used == 0 || size > (std::uint64_t{1} << 31)
                          ? std::nullopt
                          : payload(bytes, static_cast<std::uint32_t>(at), size, index);
    auto values = body ? decode_record(std::span(reinterpret_cast<const std::uint8_t*>(body->data()), body->size()))
                       : std::nullopt;
    if (!values) {
      ++bad;
      continue;
    }
    cell.values = std::move(*values);
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::vector<std::uint32_t> SqliteFile::freelist_pages() {
  std::vector<std::uint32_t> out;
  if (!header_valid_) return out;
  const auto first = page(1);
  if (first.empty()) return out;
  std::uint32_t trunk = be32(first.data() + 32);
  std::set<std::uint32_t> seen;
  while (trunk >= 2 && trunk <= page_count_ && seen.insert(trunk).second) {
    const auto bytes = page(trunk);
    if (bytes.empty()) break;
    out.push_back(trunk);
    const std::uint32_t leaves = be32(bytes.data() + 4);
    const std::uint32_t next = be32(bytes.data());
    for (std::uint32_t i = 0; i < leaves && 8 + 4 * (i + 1) <= usable_size_; ++i)
      out.push_back(be32(bytes.data() + 8 + 4 * i));
    trunk = next;
  }
  return out;
}

}  // namespace laconic::storage::pages
