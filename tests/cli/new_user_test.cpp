// What a new user expects of a tracker's command line and tripped over (issue 29): tags and notes
// on runs, runs --tag and --watch, the run_results view, reports of two experiments side by side,
// --set and --repeat, and the messages that sent users the wrong way (LACONIC_DB against --db,
// export's formats, --where without a did-you-mean, check hiding max_steps).
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_harness.hpp"
#include "recorded_runs.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

std::int64_t metric_rows(const std::string& db) { return count_rows(db, "metric_values"); }

}  // namespace

TEST_CASE("tag and note write about runs, never about their metrics, and runs --tag selects by them", "[cli][tags]") {
  RecordedRuns f;
  const std::int64_t rows = metric_rows(f.db);
  auto r = f.laconic(str_cat("tag ", f.none, " ", f.topk1, " baseline"));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("tagged runs 1, 2 'baseline'"));
  REQUIRE(f.laconic(str_cat("tag ", f.topk1, " paper")).status == 0);
  REQUIRE(f.laconic(str_cat("note ", f.topk1, " 'lr 0.1 was too high'")).status == 0);
  CHECK(metric_rows(f.db) == rows);

  r = f.laconic("runs --tag baseline");
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 3);  // header and the two tagged runs
  CHECK_THAT(line_with(r.out, "compressor=topk,ratio=0.01"), Catch::Contains("baseline,paper"));
  r = f.laconic("runs --tag baseline --tag paper");
  CHECK(lines_of(r.out).size() == 2);
  r = f.laconic(str_cat("show ", f.topk1));
  CHECK_THAT(r.out, Catch::Contains("lr 0.1 was too high"));
  CHECK_THAT(r.out, Catch::Contains("baseline, paper"));

  r = f.laconic(str_cat("tag --remove ", f.none, " ", f.topk1, " baseline"));
  CHECK_THAT(r.out, Catch::Contains("removed tag 'baseline' from 2 of 2 runs"));
  CHECK_THAT(f.laconic("runs --tag baseline").out, Catch::Contains("no runs in t.db match"));
  r = f.laconic(str_cat("note ", f.topk1, " ''"));
  CHECK_THAT(f.laconic(str_cat("show ", f.topk1)).out, !Catch::Contains("lr 0.1 was too high"));
}

TEST_CASE("tag refuses unknown runs, malformed tags and a missing database, writing nothing", "[cli][tags]") {
  RecordedRuns f;
  auto r = f.laconic("tag 1 999 x");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("999"));
  CHECK(count_rows(f.db, "run_tags") == 0);
  r = f.laconic("tag 1 'two words'");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("tag 'two words' must be a word"));
  r = f.laconic("tag baseline 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("'baseline' is not a run id"));
  r = run_laconic(f.dir, "tag 1 x --db missing.db");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("database missing.db does not exist"));
  CHECK_FALSE(std::filesystem::exists(f.dir + "/missing.db"));
}

TEST_CASE("run_results answers accuracy against bytes per compressor in one SELECT", "[cli][schema]") {
  RecordedRuns f;
  REQUIRE(f.laconic(str_cat("tag ", f.topk1, " paper")).status == 0);
  auto r = f.laconic(
      "query \"SELECT compressor, json_extract(swept, '$.\\\"compressor.ratio\\\"') AS ratio, test_accuracy, "
      "bytes_sent, compression_ratio, tags FROM run_results WHERE experiment = 'fmnist' AND status = 'FINISHED' "
      "ORDER BY run_id\" --format csv");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "compressor,ratio,test_accuracy,bytes_sent,compression_ratio,tags");
  CHECK(lines[1] == "none,,0.8,48000,1,");
  CHECK(lines[2] == "topk,0.01,0.7,1920,50,paper");  // 4 workers x 6 steps x 80 bytes
  CHECK(lines[3] == "topk,0.1,0.85,9600,5,");
  // Grouped by the compressor with its fields, the two ratios stay apart without naming a field.
  r = f.laconic(
      "query \"SELECT compressor_config, count(*) AS runs FROM run_results WHERE experiment = 'fmnist' "
      "AND status = 'FINISHED' GROUP BY compressor_config ORDER BY min(run_id)\" --format csv");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto groups = lines_of(r.out);
  REQUIRE(groups.size() == 4);
  CHECK_THAT(groups[2], Catch::Contains("ratio\"\":0.01"));
  CHECK_THAT(groups[3], Catch::Contains("ratio\"\":0.1"));
}

TEST_CASE("runs --watch lists again as the database changes, bounded by --times", "[cli][runs]") {
  RecordedRuns f;
  auto r = f.laconic("runs --watch --interval 0.2 --times 2 --experiment fmnist");
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::size_t listings = 0;
  for (const auto& line : lines_of(r.out)) listings += line.starts_with("laconic runs --watch:") ? 1 : 0;
  CHECK(listings == 2);
  CHECK(r.out.find("compressor=topk,ratio=0.1,seed=1") != r.out.rfind("compressor=topk,ratio=0.1,seed=1"));
  CHECK(f.laconic("runs --watch --interval 0").status == 2);
}

TEST_CASE("a --db on the command line wins over LACONIC_DB in every command", "[cli][errors]") {
  RecordedRuns f;
  std::filesystem::copy_file(f.db, f.dir + "/other.db");
  REQUIRE(f.laconic(str_cat("tag ", f.none, " only-in-t")).status == 0);
  // run_laconic puts --db t.db last; LACONIC_DB names the other file.
  auto r = run_laconic(f.dir, "runs --tag only-in-t --db t.db", 60);
  REQUIRE(r.status == 0);
  const std::string with_env = "env LACONIC_DB=other.db '" + std::string(LACONIC_BINARY) + "'";
  const std::string command = "cd '" + f.dir + "' && " + with_env + " runs --tag only-in-t --db t.db > env.out 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK_THAT(read_file(f.dir + "/env.out"), Catch::Contains("compressor=none,seed=1"));
  const std::string missing = "cd '" + f.dir + "' && " + with_env + " runs --db missing.db > env.out 2>&1";
  CHECK(std::system(missing.c_str()) != 0);
  CHECK_THAT(read_file(f.dir + "/env.out"), Catch::Contains("database missing.db does not exist"));
  // Without --db, the variable decides.
  const std::string from_env = "cd '" + f.dir + "' && " + with_env + " runs --tag only-in-t > env.out 2>&1";
  REQUIRE(std::system(from_env.c_str()) == 0);
  CHECK_THAT(read_file(f.dir + "/env.out"), Catch::Contains("no runs in other.db match"));
}

TEST_CASE("a mistyped --where key gets a did-you-mean", "[cli][runs]") {
  RecordedRuns f;
  auto r = f.laconic("runs --where comprssor=topk");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run has a swept variable, config field or metric 'comprssor'; did you "
                                    "mean 'compressor'?"));
}

TEST_CASE("export names only the formats it writes", "[cli][export]") {
  RecordedRuns f;
  auto r = f.laconic("export --format parquet");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("export writes csv or json, got 'parquet'"));
  CHECK_THAT(r.err, !Catch::Contains("table"));
}

TEST_CASE("report A B compares the runs of two experiments side by side", "[cli][report]") {
  RecordedRuns f;
  auto r = f.laconic("report fmnist lm --gnuplot /nonexistent/gnuplot --allow-missing-figures");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("laconic-reports/fmnist-vs-lm/index.html"));
  const std::string md = read_file(f.dir + "/laconic-reports/fmnist-vs-lm/report.md");
  CHECK_THAT(md, Catch::Contains("# Experiments fmnist and lm"));
  CHECK_THAT(md, Catch::Contains("experiment=fmnist"));
  CHECK_THAT(md, Catch::Contains("experiment=lm"));
  CHECK(f.laconic("report fmnist nosuch").status == 2);
}

TEST_CASE("check shows max_steps, and --set changes a field for check and run alike", "[cli][set]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/tiny.lua", tiny_experiment("tiny", "  max_steps = 8,\n"));
  auto r = run_laconic(dir, "check tiny.lua --set epochs=3");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("(2 workers, 3 epochs of at most 8 steps (max_steps))"));
  r = run_laconic(dir, "run tiny.lua --jobs 0");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("must be a number greater than 0, got 0"));
  r = run_laconic(dir, "check tiny.lua --set epoch=3");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--set epoch=3: unknown experiment field 'epoch'; did you mean 'epochs'?"));

  // Two runs of seed 1 (--repeat 2), each of 4 steps (--set): the workers apply the same change.
  r = run_laconic(dir, "run tiny.lua --set max_steps=4 --repeat 2 --db t.db");
  REQUIRE(r.status == 0);
  auto db = storage::Database::open_read_only(dir + "/t.db");
  const auto runs = storage::list_runs(*db);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].name == "seed=1");
  CHECK(runs[1].name == "seed=1,repeat=1");
  CHECK(runs[1].repetition == 1);
  for (const auto& run : runs) {
    CHECK(run.status == storage::RunStatus::Finished);
    CHECK_THAT(run.config, Catch::Contains("\"max_steps\":4"));
    CHECK(storage::metrics_of(*db, run.id, "train_loss").size() == 8);  // 4 steps x 2 workers
    const auto facts = storage::facts_of(*db, run.id);
    CHECK(facts.at("overrides") == "max_steps=4 runs_per_seed=2");
    CHECK(std::stod(facts.at("host_demand")) >= 2.0);  // its own 2 ranks at least
    CHECK((facts.at("host_busy") == "true" || facts.at("host_busy") == "false"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a newcomer's slips get the message the docs promise: a missing file, check --db, ui on no database",
          "[cli][errors]") {
  RecordedRuns f;
  auto r = run_laconic(f.dir, "run nofile.lua");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot open experiment file 'nofile.lua': No such file or directory"));
  CHECK_FALSE(std::filesystem::exists(f.dir + "/laconic.db"));
  r = run_laconic(f.dir, "check nofile.lua");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot open experiment file 'nofile.lua'"));
  // check --db says which runs that database already holds, and that a missing one holds none.
  r = run_laconic(f.dir, "check " + std::string(LACONIC_SOURCE_DIR) + "/experiments/quickstart.lua --db t.db");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("t.db holds 0 of them FINISHED with this configuration"));
  r = run_laconic(f.dir, "check " + std::string(LACONIC_SOURCE_DIR) + "/experiments/quickstart.lua --db new.db");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("new.db does not exist yet: every run would train"));
  CHECK_FALSE(std::filesystem::exists(f.dir + "/new.db"));
  r = run_laconic(f.dir, "ui --db nodir/x.db --port 0", 20);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("database nodir/x.db does not exist"));
}
