// Recovery reads what is there (storage/leaf_salvage.hpp, storage/sqlite_pages.hpp): a database
// damaged in each way an operator meets (an interior page of each big table, a leaf page, the
// first page, truncation at several sizes, a -wal beside it) gives back exactly the rows on its
// intact leaf pages, each equal to the original; which pages those are is asked of SQLite's own
// dbstat on the undamaged file, not of the code under test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <sqlite3.h>

#include "storage/annotations.hpp"
#include "storage/recorder.hpp"
#include "storage/salvage.hpp"
#include "storage/sqlite_pages.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

constexpr std::int64_t kPage = 4096;

// Three finished runs of 12,000 metric rows each, 40 facts per run (one of 9,000 bytes, which
// overflows its page), a tag each; checkpointed, so the file holds everything and no -wal.
void record_database(const std::string& path) {
  auto db = Database::open(path);
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("e", "e.lua", "h");
  for (const char* compressor : {"none", "topk", "qsgd"}) {
    const auto run = recorder.add_run(e, sample_config(compressor, 1));
    recorder.start_run(run);
    {
      auto sink = recorder.metrics_sink(run);
      for (int i = 0; i < 4000; ++i)
        for (const char* key : {"train_loss", "time_step", "bytes_sent"}) sink->record({key, i, i / 1000, 0, 0.5 * i, 1.25 * i});
    }
    for (int f = 0; f < 39; ++f) recorder.record_fact(run, "fact_" + std::to_string(f), std::string(40 + f, 'x'));
    recorder.record_fact(run, "long", std::string(9000, 'y'));
    add_tag(*db, {run}, std::string("tag-") + compressor);
    recorder.finish_run(run, RunStatus::Finished);
  }
  exec(db->handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
}

// Every row of a table, by its key, as text.
std::map<std::string, std::string> rows_of(const std::string& path, const std::string& table) {
  auto db = Database::open_read_only(path);
  const std::string key = table == "run_facts" ? "run_id || '/' || key" : table == "run_tags" ? "run_id || '/' || tag" : "id";
  Statement q(db->handle(), str_cat("SELECT ", key, ", * FROM ", table));
  std::map<std::string, std::string> out;
  while (q.step()) {
    std::string row;
    for (int c = 1; c < sqlite3_column_count(q.handle()); ++c) row += q.column_text(c) + "|";
    out[q.column_text(0)] = row;
  }
  return out;
}

struct PageInfo {
  std::int64_t number, cells;
  std::string type;
};

// The pages of `table` as SQLite's dbstat sees them in the undamaged file.
std::vector<PageInfo> pages_of(const std::string& path, const std::string& table) {
  auto db = Database::open_read_only(path);
  Statement q(db->handle(), "SELECT pageno, ncell, pagetype FROM dbstat WHERE name = ?1 ORDER BY pageno");
  q.bind_text(1, table);
  std::vector<PageInfo> out;
  while (q.step()) out.push_back({q.column_int64(0), q.column_int64(1), q.column_text(2)});
  return out;
}

// The ids of the metric_values rows on one page (from the rows' order in the b-tree: dbstat's
// page order follows the tree, so the rows of the n-th leaf are the n-th run of ncell ids).
std::set<std::string> ids_on_leaf(const std::string& path, std::int64_t page) {
  auto db = Database::open_read_only(path);
  Statement q(db->handle(),
              "SELECT pageno, ncell FROM dbstat WHERE name = 'metric_values' AND pagetype = 'leaf' ORDER BY path");
  std::int64_t skip = 0, take = 0;
  while (q.step()) {
    if (q.column_int64(0) == page) {
      take = q.column_int64(1);
      break;
    }
    skip += q.column_int64(1);
  }
  Statement ids(db->handle(), "SELECT id FROM metric_values ORDER BY id LIMIT ?1 OFFSET ?2");
  ids.bind_int64(1, take).bind_int64(2, skip);
  std::set<std::string> out;
  while (ids.step()) out.insert(ids.column_text(0));
  return out;
}

void overwrite_page(const std::string& path, std::int64_t page, char fill) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const std::string junk(kPage, fill);
  f.seekp((page - 1) * kPage);
  f.write(junk.data(), kPage);
}

// The database at `path` as it is now (its -wal checkpointed into it).
std::string original_of(const std::string& path) {
  auto db = Database::open(path);
  exec(db->handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
  return path;
}

std::string copy_of(const TempDir& dir, const std::string& from, const std::string& name) {
  std::filesystem::copy_file(from, dir.file(name));
  return dir.file(name);
}

// The recovery's rows of `table` are the original's less `lost` (and `unnamed` more, the
// records of a WITHOUT ROWID table's damaged interior page), each equal to the original.
void check_rows(const std::string& original, const std::string& recovered, const std::string& table,
                const std::set<std::string>& lost = {}, std::int64_t unnamed = 0) {
  INFO(table);
  const auto want = rows_of(original, table);
  const auto got = rows_of(recovered, table);
  CHECK(got.size() + lost.size() + static_cast<std::size_t>(unnamed) == want.size());
  std::int64_t different = 0, missing = 0;
  for (const auto& [key, row] : want) {
    const auto it = got.find(key);
    if (it == got.end())
      missing += lost.count(key) ? 0 : 1;
    else
      different += it->second == row ? 0 : 1;
  }
  CHECK(missing == unnamed);
  CHECK(different == 0);
}

}  // namespace

TEST_CASE("a damaged interior page of each big table hides no row of its leaves: they are read directly",
          "[storage][salvage]") {
  TempDir dir;
  const std::string original = dir.file("a.db");
  record_database(original);
  for (const std::string table : {"metric_values", "run_facts"}) {
    INFO(table);
    const auto pages = pages_of(original, table);
    const auto interior = std::find_if(pages.begin(), pages.end(), [](const PageInfo& p) { return p.type == "internal"; });
    REQUIRE(interior != pages.end());  // the table is big enough to have one
    const std::string damaged = copy_of(dir, original, table + ".db");
    overwrite_page(damaged, interior->number, '\x5a');
    const SalvageReport report = salvage_database(damaged, dir.file(table + "-rec.db"));
    REQUIRE_FALSE(report.from_leaf_pages.empty());
    CHECK(report.damaged_pages >= 1);
    CHECK(report.unreadable_cells == 0);
    for (const std::string t : {"metric_values", "run_facts", "runs", "run_tags", "experiments", "metric_keys"})
      // A WITHOUT ROWID table's interior page holds rows itself (run_facts'): those are lost with it.
      check_rows(original, dir.file(table + "-rec.db"), t, {}, t == table && t == "run_facts" ? interior->cells : 0);
  }
}

TEST_CASE("a damaged leaf page loses its own rows and no other", "[storage][salvage]") {
  TempDir dir;
  const std::string original = dir.file("a.db");
  record_database(original);
  const auto pages = pages_of(original, "metric_values");
  std::vector<PageInfo> leaves;
  for (const PageInfo& p : pages)
    if (p.type == "leaf") leaves.push_back(p);
  REQUIRE(leaves.size() > 10);
  const PageInfo victim = leaves[leaves.size() / 2];
  const std::set<std::string> lost = ids_on_leaf(original, victim.number);
  REQUIRE(static_cast<std::int64_t>(lost.size()) == victim.cells);
  const std::string damaged = copy_of(dir, original, "leaf.db");
  overwrite_page(damaged, victim.number, '\x00');
  salvage_database(damaged, dir.file("leaf-rec.db"));
  check_rows(original, dir.file("leaf-rec.db"), "metric_values", lost);
  check_rows(original, dir.file("leaf-rec.db"), "run_facts");
}

TEST_CASE("without its first page (header and schema) every table is read off its leaf pages",
          "[storage][salvage]") {
  TempDir dir;
  const std::string original = dir.file("a.db");
  record_database(original);
  for (const char fill : {'\x00', '\x33'}) {
    const std::string name = fill == 0 ? "zero" : "junk";
    const std::string damaged = copy_of(dir, original, name + ".db");
    overwrite_page(damaged, 1, fill);
    const SalvageReport report = salvage_database(damaged, dir.file(name + "-rec.db"));
    CHECK(report.schema_lost);
    for (const std::string t : {"metric_values", "run_facts", "runs", "run_tags", "experiments", "metric_keys"})
      check_rows(original, dir.file(name + "-rec.db"), t);
  }
}

TEST_CASE("a file cut short gives back the rows on the leaf pages that are still whole", "[storage][salvage]") {
  TempDir dir;
  const std::string original = dir.file("a.db");
  record_database(original);
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(original));
  const auto pages = pages_of(original, "metric_values");
  for (const double fraction : {0.1, 0.35, 0.6, 0.99}) {
    INFO(fraction);
    const std::int64_t cut = static_cast<std::int64_t>(fraction * static_cast<double>(size));
    std::set<std::string> lost;
    for (const PageInfo& p : pages)
      if (p.type == "leaf" && p.number * kPage > cut)
        for (const std::string& id : ids_on_leaf(original, p.number)) lost.insert(id);
    const std::string name = "cut" + std::to_string(static_cast<int>(fraction * 100));
    const std::string damaged = copy_of(dir, original, name + ".db");
    std::filesystem::resize_file(damaged, static_cast<std::uintmax_t>(cut));
    salvage_database(damaged, dir.file(name + "-rec.db"));
    check_rows(original, dir.file(name + "-rec.db"), "metric_values", lost);
  }
}

TEST_CASE("the committed frames of a -wal beside the file are read over its pages", "[storage][salvage]") {
  TempDir dir;
  const std::string path = dir.file("w.db");
  record_database(path);
  {
    // A change that stays in the -wal and leaves every row its size (worker 0 and 1 are stored in
    // no bytes), so that no interior page changes: the last run's rows moved to worker 1.
    auto db = Database::open(path);
    exec(db->handle(), "PRAGMA wal_autocheckpoint = 0");
    exec(db->handle(), "UPDATE metric_values SET worker = 1 WHERE run_id = 3");
    // The file and its -wal as a crash would leave them: copied while the connection is open.
    std::filesystem::copy_file(path, dir.file("crash.db"));
    std::filesystem::copy_file(path + "-wal", dir.file("crash.db-wal"));
  }
  pages::SqliteFile file(dir.file("crash.db"));
  CHECK(file.wal_pages() > 0);
  // The top page of metric_values gone from the main file (the change did not touch it): the
  // table's rows come off its leaf pages, the -wal's versions of those it holds.
  std::int64_t root = 0;
  {
    auto db = Database::open_read_only(path);
    Statement q(db->handle(), "SELECT rootpage FROM sqlite_master WHERE name = 'metric_values'");
    REQUIRE(q.step());
    root = q.column_int64(0);
  }
  overwrite_page(dir.file("crash.db"), root, '\x00');
  const SalvageReport report = salvage_database(dir.file("crash.db"), dir.file("crash-rec.db"));
  CHECK_FALSE(report.from_leaf_pages.empty());
  auto recovered = Database::open_read_only(dir.file("crash-rec.db"));
  Statement run_3(recovered->handle(), "SELECT count(*), sum(worker) FROM metric_values WHERE run_id = 3");
  REQUIRE(run_3.step());
  CHECK(run_3.column_int64(0) == 12000);
  CHECK(run_3.column_int64(1) == 12000);
  check_rows(original_of(path), dir.file("crash-rec.db"), "metric_values", {}, 0);
}
