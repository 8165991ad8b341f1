// laconic recover --from-damaged (storage/salvage.hpp): every row that can still be read of a
// damaged database, copied into a new one; the damaged file only read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

#include "engine/core/error.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/salvage.hpp"
#include "storage/sqlite_sink.hpp"
#include "storage/statement.hpp"
#include "storage_test_support.hpp"

using namespace laconic;
using namespace laconic::storage;
using laconic::storage::testing::sample_config;
using laconic::storage::testing::scalar;
using laconic::storage::testing::TempDir;

namespace {

// Two finished runs of `steps` steps of train_loss each, checkpointed into the file.
void record_salvage_steps(const std::string& path, int steps) {
  auto db = Database::open(path);
  Recorder recorder(*db);
  const auto e = recorder.add_experiment("e", "e.lua", "h");
  for (const char* compressor : {"none", "topk"}) {
    const auto run = recorder.add_run(e, sample_config(compressor, 1));
    recorder.start_run(run);
    {
      auto sink = recorder.metrics_sink(run);
      for (int i = 0; i < steps; ++i) sink->record({"train_loss", i, 0, 0, 0.0, 1.0 * i});
    }
    recorder.record_fact(run, "cores", "2");
    recorder.finish_run(run, RunStatus::Finished);
  }
  exec(db->handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
}

std::int64_t count(const std::string& path, const std::string& table) {
  auto db = Database::open_read_only(path);
  Statement q(db->handle(), "SELECT count(*) FROM " + table);
  q.step();
  return q.column_int64(0);
}

}  // namespace

TEST_CASE("an intact database is copied whole, summaries and all", "[storage][salvage]") {
  TempDir dir;
  record_salvage_steps(dir.file("a.db"), 500);
  const auto report = salvage_database(dir.file("a.db"), dir.file("copy.db"));
  CHECK(report.damaged.empty());
  CHECK(report.summaries_rebuilt == 2);
  CHECK(count(dir.file("copy.db"), "metric_values") == 1000);
  CHECK(count(dir.file("copy.db"), "run_facts") == 2);
  auto original = Database::open_read_only(dir.file("a.db"));
  auto copy = Database::open_read_only(dir.file("copy.db"));
  for (std::int64_t run : {1, 2}) {
    CHECK(find_run(*copy, run)->status == RunStatus::Finished);
    CHECK(summary_of(*copy, run).at("train_loss").sum == summary_of(*original, run).at("train_loss").sum);
    CHECK(summary_of(*copy, run).at("train_loss").last == 499);
  }
  CHECK_THROWS_AS(salvage_database(dir.file("a.db"), dir.file("copy.db")), ConfigError);  // never overwritten
  CHECK_THROWS_AS(salvage_database(dir.file("missing.db"), dir.file("new.db")), ConfigError);
}

TEST_CASE("a damaged database gives up only the rows on its damaged pages", "[storage][salvage]") {
  TempDir dir;
  const std::string path = dir.file("d.db");
  record_salvage_steps(path, 20000);
  {
    // Eight pages spread over the middle of the file: the table's and its index's alike.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto pages = static_cast<std::streamoff>(std::filesystem::file_size(path) / 4096);
    const std::string junk(4096, '\x5a');
    for (int i = 0; i < 8; ++i) {
      f.seekp((pages / 3 + i * (pages / 24)) * 4096);
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  const auto size = std::filesystem::file_size(path);
  const auto mtime = std::filesystem::last_write_time(path);
  const auto report = salvage_database(path, dir.file("saved.db"));
  REQUIRE(report.damaged.size() >= 1);
  CHECK_THAT(report.damaged.front(), Catch::Contains("metric_values (rows up to id "));
  const std::int64_t saved = count(dir.file("saved.db"), "metric_values");
  CHECK(saved < 40000);
  CHECK(saved > 30000);  // a page of 4 KiB holds a few hundred rows: most are read
  CHECK(count(dir.file("saved.db"), "runs") == 2);
  // A run that lost rows is not shown FINISHED with wrong finals: KILLED, with what survived,
  // so that --resume trains it again; a run that lost none stays FINISHED.
  {
    auto saved_db = Database::open_read_only(dir.file("saved.db"));
    int killed = 0;
    for (std::int64_t run : {1, 2}) {
      Statement rows(saved_db->handle(), "SELECT count(*) FROM metric_values WHERE run_id = ?1");
      rows.bind_int64(1, run);
      rows.step();
      const auto found = find_run(*saved_db, run);
      INFO("run " << run << ": " << rows.column_int64(0) << " rows, " << found->error);
      if (rows.column_int64(0) < 20000) {
        ++killed;
        CHECK(found->status == RunStatus::Killed);
        CHECK_THAT(found->error,
                   Catch::Contains("of 20000 metric rows") && Catch::Contains("--resume trains it again"));
      } else {
        CHECK(found->status == RunStatus::Finished);
      }
    }
    CHECK(killed >= 1);
    CHECK(static_cast<std::int64_t>(report.incomplete.size()) == killed);
  }
  CHECK(std::filesystem::file_size(path) == size);  // only read
  CHECK(std::filesystem::last_write_time(path) == mtime);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("a file that cannot be read at all is named, and no half-made recovery is left to refuse the next try",
          "[storage][salvage]") {
  TempDir dir;
  const std::string good = dir.file("good.db");
  record_salvage_steps(good, 2000);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(bytes.size() > 3 * 4096);
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir.file(name), std::ios::binary) << content;
    return dir.file(name);
  };
  std::string noise(8192, '\0');
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  const std::string out = dir.file("rec.db");
  for (const auto& [name, content, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"noise.db", noise, "it is not an SQLite database"},
           {"zeros.db", std::string(3 * 4096, '\0'), "it is not an SQLite database"}}) {
    INFO(name);
    const std::string damaged = write(name, content);
    try {
      salvage_database(damaged, out);
      FAIL("recovered from " << name);
    } catch (const StorageError& e) {
      CHECK_THAT(e.what(), Catch::Contains("cannot recover '" + damaged + "': " + why));
      CHECK_THAT(e.what(), !Catch::Contains("laconic.db"));
    }
    CHECK_FALSE(std::filesystem::exists(out));  // the next try is not refused as "exists already"
    CHECK_FALSE(std::filesystem::exists(out + "-wal"));
  }
  // The intact file then recovers into the same name.
  CHECK(salvage_database(good, out).copied.size() > 0);
}

TEST_CASE("a write-ahead log damaged before its end is refused before anything writes, and recovered past the damage",
          "[storage][salvage][wal]") {
  TempDir dir;
  const std::string live = dir.file("live.db"), path = dir.file("w.db");
  constexpr int kRows = 20000;
  {
    auto db = Database::open(live);
    exec(db->handle(), "PRAGMA wal_autocheckpoint = 0");  // every row stays in the log
    Recorder recorder(*db);
    const auto e = recorder.add_experiment("e", "e.lua", "h");
    const auto run = recorder.add_run(e, sample_config("none", 1));
    recorder.start_run(run);
    {
      auto sink = recorder.metrics_sink(run);
      for (int i = 0; i < kRows; ++i) {
        sink->record({"train_loss", i, 0, 0, 0.0, 1.0 * i});
        if (i % 500 == 499) sink->flush();  // a commit every 500 rows: many frames
      }
    }
    recorder.finish_run(run, RunStatus::Finished);
    // Copied while the writer still holds it open: the file and its whole log.
    std::filesystem::copy_file(live, path);
    std::filesystem::copy_file(live + "-wal", path + "-wal");
  }
  const auto frames = (std::filesystem::file_size(path + "-wal") - 32) / (24 + 4096);
  REQUIRE(frames > 20);
  {
    // 200 bytes of one frame's page, a third of the way in, overwritten.
    std::fstream f(path + "-wal", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(32 + (frames / 3) * (24 + 4096) + 24 + 1000));
    const std::string junk(200, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto wal_size = std::filesystem::file_size(path + "-wal");
  try {
    Database::open(path);
    FAIL("a damaged log was opened for writing");
  } catch (const StorageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("its write-ahead log " + path + "-wal is damaged at frame ") &&
                             Catch::Contains("would drop the ") && Catch::Contains("laconic recover --from-damaged"));
  }
  CHECK(std::filesystem::file_size(path + "-wal") == wal_size);  // nothing written
  CHECK(std::filesystem::exists(path + "-wal.damaged"));
  const auto report = salvage_database(path, dir.file("saved.db"));
  CHECK_THAT(report.wal_damage, Catch::Contains("is damaged at frame ") && Catch::Contains("read directly"));
  // SQLite alone stops a third of the way; the frames after the damage bring back the rest but
  // the rows that were only on the damaged page.
  const std::int64_t saved = count(dir.file("saved.db"), "metric_values");
  INFO(saved << " of " << kRows << " rows");
  CHECK(saved > kRows * 9 / 10);
  CHECK(saved <= kRows);
}

TEST_CASE("a write-ahead log bad only in a transaction that never committed opens, its committed rows whole",
          "[storage][salvage][wal]") {
  // A writer killed inside a transaction leaves its frames without a commit after them, and SQLite
  // may have rewritten one of them in place: a frame that fails its checksum with valid ones after
  // it, none of which commits. SQLite drops them all, as it must; nothing committed is lost.
  TempDir dir;
  const std::string live = dir.file("live.db"), path = dir.file("w.db");
  constexpr int kCommitted = 4000, kUncommitted = 20000;
  {
    auto db = Database::open(live);
    exec(db->handle(), "PRAGMA wal_autocheckpoint = 0");  // every row stays in the log
    Recorder recorder(*db);
    const auto run = recorder.add_run(recorder.add_experiment("e", "e.lua", "h"), sample_config("none", 1));
    recorder.start_run(run);
    {
      SqliteSink sink(*db, run, 500);  // a commit every 500 rows
      for (int i = 0; i < kCommitted; ++i) sink.record({"train_loss", i, 0, 0, 0.0, 1.0 * i});
    }
    {
      SqliteSink last(*db, run, kUncommitted + 1);  // one transaction of many frames
      for (int i = 0; i < kUncommitted; ++i) last.record({"train_loss", kCommitted + i, 0, 1, 0.0, 2.0 * i});
    }
    std::filesystem::copy_file(live, path);
    std::filesystem::copy_file(live + "-wal", path + "-wal");
  }
  std::fstream f(path + "-wal", std::ios::in | std::ios::out | std::ios::binary);
  const auto be32 = [&](std::uint64_t at) {
    unsigned char b[4] = {};
    f.seekg(static_cast<std::streamoff>(at));
    f.read(reinterpret_cast<char*>(b), 4);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  };
  const std::uint64_t frame = 24 + be32(8);
  const std::uint64_t frames = (std::filesystem::file_size(path + "-wal") - 32) / frame;
  std::vector<std::uint64_t> commits;  // the frames that commit, from 0
  for (std::uint64_t i = 0; i < frames; ++i)
    if (be32(32 + i * frame + 4) != 0) commits.push_back(i);
  REQUIRE(commits.size() >= 2);
  const std::uint64_t last = commits.back(), before = commits[commits.size() - 2];
  REQUIRE(last - before >= 4);
  // The last transaction's commit frame gone, and a frame in its middle overwritten in part.
  f.seekp(static_cast<std::streamoff>(32 + (before + 2) * frame + 24 + 1000));
  const std::string junk(200, '\x5a');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  f.close();
  std::filesystem::resize_file(path + "-wal", 32 + last * frame);
  auto db = Database::open(path);  // not refused
  CHECK(scalar(*db, "SELECT count(*) FROM metrics WHERE key = 'train_loss'") == kCommitted);
  CHECK(scalar(*db, "SELECT count(*) FROM metrics WHERE worker = 1") == 0);
}
