// The controller's writes survive a database that cannot take them for a while: the retrying
// sink keeps every row through a held lock, a recovery journal holds what could not be written,
// and its replay happens exactly once. Damaged files, directories and read-only media are named.
#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "storage/journal.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"
#include "storage/user_query.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::TempDir;

namespace {

std::int64_t count_of(Database& db, std::int64_t run, const std::string& key) {
  Statement q(db.handle(), "SELECT count(*) FROM metrics WHERE run_id = ?1 AND key = ?2");
  q.bind_int64(1, run).bind_text(2, key);
  q.step();
  return q.column_int64(0);
}

// Another process's lock, from another connection: BEGIN IMMEDIATE held until release().
class HeldLock {
 public:
  explicit HeldLock(const std::string& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db_) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  void release() {
    if (db_ == nullptr) return;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }
  ~HeldLock() { release(); }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace

TEST_CASE("transient SQLite failures are told from permanent ones", "[storage][durability]") {
  CHECK(is_transient(StorageError("x", SQLITE_BUSY)));
  CHECK(is_transient(StorageError("x", SQLITE_FULL)));
  CHECK(is_transient(StorageError("x", SQLITE_IOERR)));
  CHECK(is_transient(StorageError("x", SQLITE_READONLY)));
  CHECK(is_transient(StorageError("x", SQLITE_IOERR_WRITE)));  // extended codes too
  CHECK_FALSE(is_transient(StorageError("x", SQLITE_CORRUPT)));
  CHECK_FALSE(is_transient(StorageError("x", SQLITE_CONSTRAINT)));
  CHECK_FALSE(is_transient(StorageError("x", -1)));
}

TEST_CASE("a retrying sink keeps every row while another process holds the lock, and writes them after",
          "[storage][durability]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  auto db = Database::open(path);
  Recorder recorder(*db);
  const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  auto sink = recorder.retrying_sink(run);
  sink->record({"train_loss", 0, 0, 0, 0.0, 1.0});
  sink->flush();
  REQUIRE(sink->pending() == 0);

  HeldLock lock(path);
  // Past a batch, while locked: the commit fails after the busy timeout, and nothing throws.
  for (int i = 1; i <= static_cast<int>(SqliteSink::kBatchRows) + 10; ++i)
    sink->record({"train_loss", i, 0, 0, 0.0, 1.0 + i});
  CHECK(sink->pending() == SqliteSink::kBatchRows + 10);
  CHECK(sink->outage_seconds() > 0);
  CHECK_THAT(sink->last_error(), Catch::Contains("database is locked"));
  sink->flush();  // still locked: kept
  CHECK(sink->pending() == SqliteSink::kBatchRows + 10);

  lock.release();
  sink->flush();
  CHECK(sink->pending() == 0);
  CHECK(sink->outage_seconds() == 0);
  CHECK(sink->last_error().empty());
  CHECK(count_of(*db, run, "train_loss") == static_cast<std::int64_t>(SqliteSink::kBatchRows) + 11);
  CHECK(summary_of(*db, run).at("train_loss").count == static_cast<std::int64_t>(SqliteSink::kBatchRows) + 11);
}

TEST_CASE("a recovery journal round-trips, replays exactly once, and refuses the wrong database",
          "[storage][durability][journal]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  auto db = Database::open(path);
  Recorder recorder(*db);
  const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
  REQUIRE(recorder.start_run(run));

  Journal journal = new_journal(path);
  journal.metrics.push_back({run,
                             {{"train_loss", 0, 0, 0, 0.5, 2.0},
                              {"train_loss", 1, 0, 1, 0.6, std::nan("")},
                              {"odd\tkey", 2, 0, 0, 0.7, -INFINITY}}});
  journal.statuses.push_back({run, "FINISHED", 1234.5, ""});
  journal.facts.push_back({run, "blas_library", "/usr/lib/x\ty.so"});
  const std::string file = write_journal(journal);
  CHECK(file == path + ".journal-" + journal.id);
  CHECK(find_journals(path) == std::vector<std::string>{file});

  const Journal back = read_journal(file);
  CHECK(back.id == journal.id);
  CHECK(back.database == path);
  REQUIRE(back.rows() == 3);
  CHECK(back.metrics[0].records[2].key == "odd\tkey");
  CHECK(std::isnan(back.metrics[0].records[1].value));
  CHECK(back.facts[0].value == "/usr/lib/x\ty.so");

  CHECK(replay_journal(*db, back, file) == 3);
  CHECK(count_of(*db, run, "train_loss") == 2);
  CHECK(find_run(*db, run)->status == storage::RunStatus::Finished);
  CHECK(facts_of(*db, run).at("blas_library") == "/usr/lib/x\ty.so");
  CHECK(summary_of(*db, run).at("train_loss").nan_count == 1);
  // Exactly once: the second replay is refused and writes nothing.
  CHECK_THROWS_WITH(replay_journal(*db, back, file), Catch::Contains("was already replayed"));
  CHECK(count_of(*db, run, "train_loss") == 2);
  mark_replayed(file);
  CHECK(find_journals(path).empty());

  // A journal of another database names its runs: refused, nothing written.
  Journal foreign = new_journal(path);
  foreign.metrics.push_back({run + 100, {{"train_loss", 0, 0, 0, 0.5, 2.0}}});
  CHECK_THROWS_WITH(replay_journal(*db, foreign, "x"), Catch::Contains("names run " + std::to_string(run + 100)));
}

TEST_CASE("a journal cut short or of another format is refused with its name", "[storage][durability][journal]") {
  TempDir dir;
  Journal journal = new_journal(dir.file("runs.db"));
  journal.metrics.push_back({1, {{"train_loss", 0, 0, 0, 0.5, 2.0}, {"train_loss", 1, 0, 0, 0.5, 2.0}}});
  const std::string file = write_journal(journal);
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(dir.file("cut")) << text.substr(0, text.rfind("END"));
  CHECK_THROWS_WITH(read_journal(dir.file("cut")), Catch::Contains("cut short"));
  std::ofstream(dir.file("other")) << "hello\n";
  CHECK_THROWS_WITH(read_journal(dir.file("other")), Catch::Contains("is not a laconic recovery journal"));
  CHECK_THROWS_AS(read_journal(dir.file("missing")), ConfigError);
}

TEST_CASE("a journal that cannot go next to its database goes to TMPDIR, where it is found", "[storage][durability]") {
  TempDir dir;
  // The database's directory does not exist: nothing can be written beside it.
  const std::string path = dir.file("gone/runs.db");
  Journal journal = new_journal(path);
  journal.statuses.push_back({1, "KILLED", 1.0, "stopped"});
  const std::string file = write_journal(journal);
  CHECK(file.starts_with(std::filesystem::temp_directory_path().string()));
  CHECK(find_journals(path) == std::vector<std::string>{file});
  std::filesystem::remove(file);
}

TEST_CASE("a damaged database is found by quick_check and named with the way to recover it", "[storage][bad]") {
  TempDir dir;
  const std::string path = dir.file("runs.db");
  {
    auto db = Database::open(path);
    Recorder recorder(*db);
    const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("topk", 1));
    auto sink = recorder.metrics_sink(run);
    for (int i = 0; i < 20000; ++i) sink->record({"train_loss", i, 0, 0, 0.0, 1.0 * i});
    sink->flush();
    exec(db->handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  {
    // Scribble over a page in the middle of the file (not the header).
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path) / 2));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto db = Database::open(path);
  try {
    db->check_integrity();
    FAIL("quick_check found nothing");
  } catch (const StorageError& e) {
    CHECK(e.code() == SQLITE_CORRUPT);
    CHECK_THAT(e.what(), Catch::Contains("database " + path + " is damaged") &&
                             Catch::Contains("laconic recover --from-damaged " + path + " recovered.db"));
  }
}

TEST_CASE("storage errors name the file and what to do, not the SQL", "[storage][bad]") {
  const std::string raw = "while running 'INSERT INTO metric_values ...': database or disk is full (SQLite code 13)";
  const std::string text = explain_storage_error(SQLITE_FULL, raw, "runs.db");
  CHECK_THAT(text, Catch::Contains("the disk holding database runs.db is full") && Catch::Contains("--resume"));
  CHECK(text.find("INSERT") == std::string::npos);
  CHECK_THAT(explain_storage_error(SQLITE_NOTADB, "while running 'PRAGMA ...': file is not a database (SQLite code 26)",
                                   "notes.txt"),
             Catch::StartsWith("database notes.txt is not an SQLite database"));
  CHECK_THAT(explain_storage_error(SQLITE_BUSY, "... (SQLite code 5)", "r.db"),
             Catch::Contains("stayed locked by another process"));
  // laconic's own messages are kept.
  CHECK(explain_storage_error(SQLITE_CORRUPT, "database x is damaged; ...", "x") == "database x is damaged; ...");
}

TEST_CASE("a directory given as the database is called a directory", "[storage][bad]") {
  TempDir dir;
  CHECK_THROWS_WITH(Database::open(dir.path().string()), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(Database::open_read_only(dir.path().string()), Catch::Contains("is a directory"));
}

TEST_CASE("load_extension and other functions that reach outside are refused by name", "[storage][user_query]") {
  auto db = Database::open(":memory:");
  CHECK_THROWS_WITH(UserQuery(*db, "SELECT load_extension('/tmp/x.so')"),
                    Catch::Contains("the function load_extension() is refused"));
  CHECK_THROWS_AS(UserQuery(*db, "SELECT LOAD_EXTENSION('/tmp/x.so')"), ConfigError);
  UserQuery fine(*db, "SELECT abs(-1), json_extract('{\"a\":1}', '$.a')");
  std::vector<Cell> row;
  CHECK(fine.next(row));
}
