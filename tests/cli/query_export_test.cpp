// `laconic query` and `laconic export` as a user runs them: one read-only statement as a table,
// CSV or JSON, writes refused with the database unchanged; metrics, summaries and runs streamed.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "engine/core/metric_keys.hpp"
#include "recorded_runs.hpp"

using namespace laconic;
using namespace laconic::testing;

TEST_CASE("query prints one read-only statement as a table, csv or json", "[cli][query]") {
  RecordedRuns f;
  const std::string sql =
      "\"SELECT r.id, r.status, s.last AS acc, r.error FROM runs r LEFT JOIN run_summary s ON s.run_id = r.id "
      "AND s.key = 'test_accuracy' WHERE json_extract(r.swept, '\\$.compressor') != 'topk' ORDER BY r.id\"";
  auto r = f.laconic("query " + sql);
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK_THAT(lines[0], Catch::StartsWith("id") && Catch::Contains("acc") && Catch::Contains("error"));
  CHECK_THAT(lines[1], Catch::Contains("FINISHED") && Catch::Contains("0.8") && Catch::EndsWith("NULL"));
  CHECK_THAT(lines[2], Catch::Contains("DIVERGED") && Catch::Contains("NULL") && Catch::Contains("loss became NaN"));

  r = f.laconic("query --format csv " + sql);
  REQUIRE(r.status == 0);
  lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "id,status,acc,error");
  CHECK(lines[1] == std::to_string(f.none) + ",FINISHED,0.8,");
  CHECK(lines[2] == std::to_string(f.diverged) + ",DIVERGED,,loss became NaN at step 0");

  r = f.laconic("query --format json " + sql);
  REQUIRE(r.status == 0);
  const auto json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 3);
  CHECK(json[0]["acc"].get<double>() == 0.8);
  CHECK(json[1]["acc"].is_null());
  CHECK(json[2]["id"] == f.lm);
}

TEST_CASE("query refuses writes and leaves the database unchanged", "[cli][query]") {
  RecordedRuns f;
  const auto before = read_file(f.db);
  const std::int64_t metrics = count_rows(f.db, "metrics"), runs = count_rows(f.db, "runs");
  for (const std::string sql :
       {"INSERT INTO experiments (name, file_path, file_hash, created) VALUES ('x', 'x', 'x', 0)",
        "DELETE FROM metrics", "DROP TABLE runs", "UPDATE runs SET status = 'FAILED'", "SELECT 1; DELETE FROM metrics",
        "ATTACH DATABASE 'other.db' AS o", "PRAGMA query_only = 0"}) {
    auto r = f.laconic("query \"" + sql + "\"");
    INFO(sql << "\n" << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("laconic query only reads") || Catch::Contains("one statement"));
  }
  CHECK_FALSE(std::filesystem::exists(f.dir + "/other.db"));
  CHECK(count_rows(f.db, "metrics") == metrics);
  CHECK(count_rows(f.db, "runs") == runs);
  CHECK(read_file(f.db) == before);
  auto r = f.laconic("query \"SELECT x FROM nowhere\"");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no such table: nowhere"));
}

TEST_CASE("export streams metrics, summaries and runs as csv or json", "[cli][export]") {
  RecordedRuns f;
  auto r = f.laconic("export --format csv --experiment fmnist --key test_loss");
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 1 + 3 * 2 + 1);  // header, 2 epochs of 3 runs, the diverged run's one
  CHECK(lines[0] == "run_id,experiment,run,key,step,epoch,worker,wall_time,value");
  CHECK(lines[1] == std::to_string(f.none) + ",fmnist,\"compressor=none,seed=1\",test_loss,2,0,0,0.3,1.1");
  CHECK(lines.back() == std::to_string(f.diverged) + ",fmnist,\"compressor=qsgd,seed=1\",test_loss,2,0,0,0.3,inf");

  r = f.laconic("export --format json --run " + std::to_string(f.diverged) + " --out d.json");
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("wrote 3 metrics rows to d.json"));
  auto json = nlohmann::json::parse(read_file(f.dir + "/d.json"));
  REQUIRE(json.size() == 3);
  CHECK(json[0]["key"] == "test_accuracy");
  CHECK(json[0]["value"] == "NaN");
  CHECK(json[1]["value"] == "Infinity");
  CHECK(json[2]["key"] == "train_loss");

  r = f.laconic("export --what summary --format csv --key bytes_sent --experiment fmnist");
  REQUIRE(r.status == 0);
  lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "run_id,experiment,run,key,last,min,max,mean,sum,count,nan_count");
  CHECK(lines[2] == std::to_string(f.topk1) +
                        ",fmnist,\"compressor=topk,ratio=0.01,seed=1\",bytes_sent,80,80,80,80,"
                        "1920,24,0");

  r = f.laconic("export --what runs --format json");
  REQUIRE(r.status == 0);
  json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 5);
  CHECK(json[1]["config"]["compressor"]["ratio"].get<double>() == 0.01);
  CHECK(json[1][keys::kBytesSent].get<double>() == 1920);

  r = f.laconic("export --format table");
  CHECK(r.status == 2);
  r = f.laconic("export --what everything");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("known: runs, metrics, summary"));
  r = f.laconic("export --run 42");
  CHECK(r.status == 2);
}

TEST_CASE("query reads a long statement from a file or standard input, bounds its result, and exits 2 on every "
          "refusal",
          "[cli][query]") {
  RecordedRuns f;
  // A statement of 1 MB, beyond what one argument may carry (128 KiB on Linux).
  write_file(f.dir + "/long.sql", "SELECT length('" + std::string(1 << 20, 'x') + "') AS n");
  auto r = f.laconic("query --file long.sql --format csv");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "n\n1048576\n");
  r = f.laconic("query --file - --format csv < long.sql");
  CHECK(r.status == 0);
  CHECK(r.out == "n\n1048576\n");

  // One value past --max-bytes, and rows that pass it together: stopped, saying so, exit 2.
  r = f.laconic("query \"SELECT zeroblob(2000000000)\"");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("a value of the result is larger than 268435456 bytes (--max-bytes)"));
  r = f.laconic("query \"SELECT value FROM metrics\" --max-bytes 64 --format csv");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("the result passed 64 bytes after") && Catch::Contains("--max-bytes N allows more"));
  CHECK(lines_of(r.out).size() >= 2);  // the rows before the bound, with their header
  // The table format holds every row until the end: counted by the memory it holds, a string
  // per cell, so that a table of small cells stops near the bound, not at 11 times it.
  const std::string many =
      "query \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT x, x, x FROM c\" "
      "--max-bytes 1000000";
  const auto rows_before_stop = [](const std::string& err) {
    const std::size_t at = err.find(" bytes after ");
    return at == std::string::npos ? -1L : std::stol(err.substr(at + 13));
  };
  const auto table = f.laconic(many), csv = f.laconic(many + " --format csv");
  CHECK(table.status == 2);
  CHECK(csv.status == 2);
  const long table_rows = rows_before_stop(table.err), csv_rows = rows_before_stop(csv.err);
  INFO(table.err << csv.err);
  CHECK(table_rows > 0);
  CHECK(table_rows < csv_rows);
  CHECK(table_rows * static_cast<long>(3 * sizeof(std::string) + sizeof(std::vector<std::string>)) <= 1000000);

  // No statement, two, one from a file that is not there: refused, exit 2.
  CHECK(f.laconic("query").status == 2);
  CHECK(f.laconic("query \"SELECT 1\" --file long.sql").status == 2);
  r = f.laconic("query --file missing.sql");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--file: cannot read 'missing.sql'"));
}
