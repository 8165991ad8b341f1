#include "storage/salvage.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <limits>
#include <set>

#include <sqlite3.h>

#include "engine/core/error.hpp"
#include "storage/database.hpp"
#include "storage/leaf_salvage.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_pages.hpp"
#include "storage/statement.hpp"

namespace laconic::storage {
namespace {

/// Tables copied, parents first; those with an integer id as rowid are read in both directions.
struct TableToCopy {
  const char* name;
  bool by_rowid;
};
constexpr TableToCopy kTables[] = {{"experiments", true},       {"runs", true},       {"metric_keys", true},
                                   {"metric_values", true},     {"run_facts", false}, {"run_tags", false},
                                   {"replayed_journals", false}};
constexpr int kChunk = 512;

/// The raw connection to the damaged file: read-only, closed on every path. Without a WAL file
/// (nothing written since the last checkpoint) it is opened immutable, so that reading it leaves
/// no file beside it.
class Source {
 public:
  explicit Source(const std::string& path) {
    const bool wal = std::filesystem::exists(path + "-wal");
    const std::string uri = str_cat("file:", path, wal ? "?mode=ro" : "?immutable=1");
    const int rc = sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) throw StorageError(str_cat("cannot open ", path, ": ", sqlite3_errstr(rc)), rc);
  }
  ~Source() { sqlite3_close_v2(db_); }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

std::vector<std::string> columns_of(sqlite3* db, const std::string& table) {
  Statement info(db, str_cat("PRAGMA table_info(", table, ")"));
  std::vector<std::string> columns;
  while (info.step()) columns.push_back(info.column_text(1));
  return columns;
}

/// The columns both files' `table` has (an older file may lack some), as "a, b, c".
std::string shared_columns(sqlite3* from, sqlite3* to, const std::string& table, int& count) {
  const auto theirs = columns_of(from, table);
  const std::set<std::string> ours_set = [&] {
    const auto ours = columns_of(to, table);
    return std::set<std::string>(ours.begin(), ours.end());
  }();
  std::string list;
  count = 0;
  for (const auto& column : theirs)
    if (ours_set.count(column)) {
      list += (list.empty() ? "" : ", ") + column;
      ++count;
    }
  return list;
}

/// Copies the current row of `select` (its columns from `first` on) through `insert`.
void copy_row(sqlite3_stmt* select, int first, int count, Statement& insert) {
  insert.reset();
  for (int i = 0; i < count; ++i) {
    const int c = first + i;
    switch (sqlite3_column_type(select, c)) {
      case SQLITE_INTEGER:
        insert.bind_int64(i + 1, sqlite3_column_int64(select, c));
        break;
      case SQLITE_FLOAT:
        insert.bind_double(i + 1, sqlite3_column_double(select, c));
        break;
      case SQLITE_NULL:
        insert.bind_null(i + 1);
        break;
      default:
        insert.bind_text(i + 1, std::string(reinterpret_cast<const char*>(sqlite3_column_text(select, c)),
                                            static_cast<std::size_t>(sqlite3_column_bytes(select, c))));
    }
  }
  insert.run();
}

/// Reads `sql` (its rowid first when `with_rowid`) from `from`, one chunk at a time, inserting
/// each row; returns false when a damaged page stopped it. `last` follows the rowids read.
bool copy_chunks(sqlite3* from, const std::string& sql, int count, Statement& insert, std::int64_t& last,
                 std::int64_t& rows) {
  while (true) {
    sqlite3_stmt* select = nullptr;
    if (sqlite3_prepare_v2(from, sql.c_str(), -1, &select, nullptr) != SQLITE_OK) return false;
    sqlite3_bind_int64(select, 1, last);
    int read = 0, rc = SQLITE_ROW;
    while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
      last = sqlite3_column_int64(select, 0);
      copy_row(select, 1, count, insert);
      ++read;
      ++rows;
    }
    sqlite3_finalize(select);
    if (rc != SQLITE_DONE) return false;
    if (read < kChunk) return true;
  }
}

/// Copies one table; adds a line to `report.damaged` when part of it could not be read.
std::int64_t copy_table(sqlite3* from, Database& to, const TableToCopy& table, SalvageReport& report) {
  int count = 0;
  const std::string columns = shared_columns(from, to.handle(), table.name, count);
  if (count == 0) return 0;
  std::string marks;
  for (int i = 0; i < count; ++i) marks += i == 0 ? "?" : ", ?";
  Statement insert(to.handle(), str_cat("INSERT OR IGNORE INTO ", table.name, " (", columns, ") VALUES (", marks, ")"));
  std::int64_t rows = 0;
  if (!table.by_rowid) {
    std::int64_t unused = 0;
    // Small tables of a few rows per run: read once, to the first damaged page.
    if (!copy_chunks(from, str_cat("SELECT 0, ", columns, " FROM ", table.name, " WHERE ?1 = ?1 LIMIT -1"), count,
                     insert, unused, rows))
      report.damaged.push_back(str_cat(table.name, " (", rows, " rows read before a damaged page)"));
    return rows;
  }
  std::int64_t up = std::numeric_limits<std::int64_t>::min();
  const bool whole = copy_chunks(
      from, str_cat("SELECT rowid, ", columns, " FROM ", table.name, " WHERE rowid > ?1 ORDER BY rowid LIMIT ", kChunk),
      count, insert, up, rows);
  if (whole) return rows;
  // From the end back down to the damage: only the rows on damaged pages are lost.
  std::int64_t down = std::numeric_limits<std::int64_t>::max();
  copy_chunks(
      from,
      str_cat("SELECT rowid, ", columns, " FROM ", table.name, " WHERE rowid < ?1 ORDER BY rowid DESC LIMIT ", kChunk),
      count, insert, down, rows);
  const bool none_read = up == std::numeric_limits<std::int64_t>::min() && down == std::numeric_limits<std::int64_t>::max();
  report.damaged.push_back(none_read ? str_cat(table.name, " (not one row: the way to its first and its last is damaged)")
                                     : str_cat(table.name, " (rows up to id ", up, " and from id ", down, " on)"));
  return rows;
}

/// The new database and its side files, after a recovery that failed: nothing half-made is left.
void remove_partial(const std::string& out) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ignored;
    std::filesystem::remove(out + suffix, ignored);
  }
}

/// Why `damaged` could not be read at all, naming it (not the --db of the command); "" for an
/// error that is not about what it holds (a full disk under `out`, ...).
std::string unreadable(const std::string& damaged, const std::string& out, const StorageError& e) {
  const int code = e.code() & 0xff;
  if (code != SQLITE_NOTADB && code != SQLITE_CORRUPT) return "";
  const std::string why = code == SQLITE_NOTADB ? "it is not an SQLite database (or it is encrypted)"
                                                : "SQLite cannot read its schema (the file is cut short, or the "
                                                  "pages that hold the schema are damaged)";
  return str_cat("cannot recover '", damaged, "': ", why, "; nothing was recovered, and '", out,
                 "' was not left behind");
}

/// Every table's and index's root page, by name; nothing when the schema cannot be read (a
/// damaged first page, or not SQLite at all).
std::optional<std::map<std::string, std::uint32_t>> schema_roots(sqlite3* db) {
  try {
    Statement roots(db, "SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0");
    std::map<std::string, std::uint32_t> out;
    while (roots.step()) out[roots.column_text(0)] = static_cast<std::uint32_t>(roots.column_int64(1));
    return out;
  } catch (const StorageError& e) {
    const int code = e.code() & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) return std::nullopt;
    throw;
  }
}

/// The tables SQL could not read to their end, read again off their leaf pages.
void salvage_leaves(const std::string& damaged, Database& target, const std::vector<std::string>& tables,
                    const std::map<std::string, std::uint32_t>& roots, SalvageReport& report) {
  const LeafSalvage leaves = salvage_leaf_pages(damaged, target, tables, roots);
  report.from_leaf_pages = leaves.rows;
  report.leaf_pages = leaves.leaf_pages;
  report.damaged_pages = leaves.damaged_pages;
  report.unreadable_cells = leaves.unreadable_cells;
  for (const auto& [table, rows] : leaves.rows) {
    auto copied = std::find_if(report.copied.begin(), report.copied.end(), [&](const auto& c) { return c.first == table; });
    if (copied == report.copied.end()) copied = report.copied.emplace(report.copied.end(), table, 0);
    copied->second += rows;
  }
}

/// The metric rows each run recorded, by the damaged file's run_summary (its counts, NaNs
/// included), as far as it can be read; empty where it cannot.
std::map<std::int64_t, std::int64_t> recorded_rows(sqlite3* source) {
  std::map<std::int64_t, std::int64_t> rows;
  try {
    Statement q(source, "SELECT run_id, count + nan_count FROM run_summary");
    while (q.step()) rows[q.column_int64(0)] += q.column_int64(1);
  } catch (const StorageError&) {  // a damaged page: what was read before it counts
  }
  return rows;
}

/// Marks KILLED the ended runs of `target` that lost metric rows (report.incomplete).
void mark_incomplete(Database& target, const std::map<std::int64_t, std::int64_t>& recorded, SalvageReport& report) {
  std::map<std::int64_t, std::int64_t> copied;
  {
    Statement q(target.handle(), "SELECT run_id, COUNT(*) FROM metric_values GROUP BY run_id");
    while (q.step()) copied[q.column_int64(0)] = q.column_int64(1);
  }
  std::vector<std::pair<std::int64_t, std::string>> lost;
  {
    Statement runs(target.handle(), "SELECT id FROM runs WHERE status IN ('FINISHED', 'DIVERGED') ORDER BY id");
    while (runs.step()) {
      const std::int64_t id = runs.column_int64(0);
      const auto was = recorded.find(id);
      const std::int64_t have = copied.count(id) ? copied.at(id) : 0;
      if (have > 0 && (was == recorded.end() || have >= was->second)) continue;
      lost.push_back({id, was == recorded.end() ? str_cat(have, " metric rows, how many it had unknown")
                                                : str_cat(have, " of ", was->second, " metric rows")});
    }
  }
  Transaction transaction(target.handle());
  for (const auto& [id, what] : lost) {
    Statement mark(target.handle(), "UPDATE runs SET status = 'KILLED', error = ?2 WHERE id = ?1");
    mark.bind_int64(1, id);
    mark.bind_text(2, str_cat("recovered from a damaged file with ", what,
                              " (laconic recover --from-damaged); laconic run --resume trains it again"));
    mark.step();
    report.incomplete.push_back(str_cat("run ", id, " (", what, ")"));
  }
  transaction.commit();
}

/// salvage_database's copy, once its arguments are checked; throws as it meets damage.
SalvageReport salvage_into(const std::string& damaged, const std::string& out) {
  Source source(damaged);
  const auto roots = schema_roots(source.handle());
  auto target = Database::open(out);
  SalvageReport report;
  std::vector<std::string> unfinished;  // tables SQL did not read to their end
  for (const TableToCopy& table : kTables) {
    if (!roots) {
      unfinished.push_back(table.name);
      continue;
    }
    if (!roots->count(table.name)) continue;  // an older schema
    Transaction transaction(target->handle());
    const std::size_t damage_before = report.damaged.size();
    report.copied.emplace_back(table.name, copy_table(source.handle(), *target, table, report));
    transaction.commit();
    if (report.damaged.size() > damage_before) unfinished.push_back(table.name);
  }
  report.schema_lost = !roots;
  // A log damaged before its end: SQL read only the frames before the damage, so every table's
  // leaf pages are read too, with the log's valid frames after it.
  if (const pages::WalScan wal = pages::scan_wal(damaged + "-wal"); wal.damaged()) {
    report.wal_damage = str_cat("the write-ahead log ", damaged, "-wal is damaged at frame ", wal.first_damaged, " (",
                                wal.damaged_frames, " damaged): SQL read its first ", wal.sqlite_frames,
                                " frames, and the pages of its ", wal.valid_frames - wal.sqlite_frames,
                                " valid frames after the damage were read directly");
    for (const TableToCopy& table : kTables)
      if (roots && roots->count(table.name) &&
          std::find(unfinished.begin(), unfinished.end(), table.name) == unfinished.end())
        unfinished.push_back(table.name);
  }
  if (!unfinished.empty()) salvage_leaves(damaged, *target, unfinished, roots.value_or(std::map<std::string, std::uint32_t>{}), report);
  std::int64_t total = 0;
  for (const auto& [table, rows] : report.copied) total += rows;
  if (!roots && total == 0)  // nothing laconic's on any page: not a laconic database, or nothing left of one
    throw StorageError("no row of a laconic table on any page", SQLITE_NOTADB);
  mark_incomplete(*target, recorded_rows(source.handle()), report);
  // run_summary is what the metrics say: computed again from those copied.
  Recorder recorder(*target);
  Statement runs(target->handle(), "SELECT id FROM runs ORDER BY id");
  std::vector<std::int64_t> ids;
  while (runs.step()) ids.push_back(runs.column_int64(0));
  for (std::int64_t id : ids) recorder.rewind_run(id, std::numeric_limits<std::int64_t>::max());
  report.summaries_rebuilt = static_cast<std::int64_t>(ids.size());
  return report;
}

}  // namespace

SalvageReport salvage_database(const std::string& damaged, const std::string& out) {
  if (!std::filesystem::is_regular_file(damaged))
    throw ConfigError(str_cat("cannot recover '", damaged, "': no such database file"));
  if (std::filesystem::exists(out))
    throw ConfigError(str_cat("'", out, "' exists already; name a new file to recover ", damaged, " into"));
  try {
    return salvage_into(damaged, out);
  } catch (const StorageError& e) {
    remove_partial(out);
    const std::string why = unreadable(damaged, out, e);
    if (why.empty()) throw;
    throw StorageError(why, e.code());
  } catch (...) {
    remove_partial(out);
    throw;
  }
}

}  // namespace laconic::storage
