// End-to-end tests of the read-side commands (runs --where, show, compare, query, export, best)
// on a database filled through the Recorder, the way `laconic run` fills it, without training.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"
#include "engine/core/metric_keys.hpp"
#include "recorded_runs.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/statement.hpp"
#include "storage/run_where.hpp"
#include "tests/storage/where_cases.hpp"

using namespace laconic;
using namespace laconic::testing;

TEST_CASE("runs --where selects by swept variables and config, numbers numerically", "[cli][runs]") {
  RecordedRuns f;
  auto r = f.laconic("runs --where compressor=topk");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 3);  // header + 2 runs
  CHECK_THAT(r.out, Catch::Contains("compressor=topk,ratio=0.01,seed=1") &&
                        Catch::Contains("compressor=topk,ratio=0.1,seed=1") && !Catch::Contains("compressor=none"));

  r = f.laconic("runs --where ratio=1e-2");
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 2);
  CHECK(line_with(r.out, "ratio=0.01").starts_with(std::to_string(f.topk1) + " "));

  r = f.laconic("runs --where compressor=topk --where workers=2 --where lr=0.1");
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 2);
  CHECK_THAT(r.out, Catch::Contains("compressor=topk,ratio=0.1,seed=1"));

  r = f.laconic("runs --where compressor=dgc");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("no runs in t.db match"));

  r = f.laconic("runs --where colour=red");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run has a swept variable, config field or metric 'colour'") &&
                        Catch::Contains("compressor.ratio"));
  r = f.laconic("runs --where compressor");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("is not KEY=VALUE, KEY!=VALUE or KEY<VALUE"));
  r = f.laconic("runs --status DONE");
  CHECK(r.status == 2);
  r = f.laconic("runs --format yaml");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown format 'yaml'; known: table, csv, json"));
}

TEST_CASE("runs --where passes the table of cases the UI's runs page passes too", "[cli][runs][where]") {
  const std::string dir = make_temp_dir();
  storage::testing::record_where_runs(*storage::Database::open(dir + "/w.db"));
  for (const storage::testing::WhereCase& c : storage::testing::where_cases()) {
    std::string args = "runs --db w.db --format json";
    for (const std::string& condition : storage::split_where_list(c.where)) args += " --where '" + condition + "'";
    const auto r = run_laconic(dir, args, 60);
    INFO(c.where << "\n" << r.out << r.err);
    if (!c.error.empty()) {
      CHECK(r.status == 2);
      CHECK_THAT(r.err, Catch::Contains(c.error));
      continue;
    }
    REQUIRE(r.status == 0);
    std::vector<std::string> names;
    if (r.out.find('[') != std::string::npos)
      for (const auto& run : nlohmann::json::parse(r.out.substr(r.out.find('[')))) names.push_back(run["name"]);
    std::sort(names.begin(), names.end());
    std::vector<std::string> expected = c.names;
    std::sort(expected.begin(), expected.end());
    CHECK(names == expected);
  }
}

TEST_CASE("runs shows perplexity, --wide columns, --metric columns and csv / json", "[cli][runs]") {
  RecordedRuns f;
  auto r = f.laconic("runs --wide --metric time_step:mean --metric test_loss");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto header = lines_of(r.out).at(0);
  for (const char* column : {"test_acc", "test_loss", "test_ppl", "ratio", "util", "attempts", "busy", "time_step:mean"})
    CHECK_THAT(header, Catch::Contains(column));
  CHECK_THAT(line_with(r.out, "ratio=0.01"), Catch::Contains("50.0x") && Catch::Contains("0.05") && Catch::Contains(" 70% "));
  CHECK_THAT(line_with(r.out, "qsgd"), Catch::Contains("DIVERGED"));
  CHECK_THAT(line_with(r.out, " lm "), Catch::Contains("123.50"));

  r = f.laconic("runs --experiment fmnist --format json");
  REQUIRE(r.status == 0);
  const auto json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 4);
  CHECK(json[1]["id"] == f.topk1);
  CHECK(json[1]["final_test_accuracy"].get<double>() == 0.70);
  CHECK(json[1]["compression_ratio"].get<double>() == 50.0);
  CHECK(json[1]["compute_utilization"].get<double>() == Approx(0.7));  // compute 0.035 of a 0.05 s step
  CHECK(json[3]["compute_utilization"].is_null());                    // recorded no step times
  CHECK(json[1]["swept"]["compressor.ratio"].get<double>() == 0.01);
  CHECK(json[3]["final_test_accuracy"].is_null());  // its last accuracy was NaN: no final value
  CHECK(json[3]["final_test_loss"] == "Infinity");
  CHECK(json[3]["error"] == "loss became NaN at step 0");
  CHECK(json[0]["error"].is_null());

  r = f.laconic("runs --experiment fmnist --format csv");
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].starts_with("id,experiment,name,status,error,seed,"));
  CHECK_THAT(lines[4], Catch::Contains(",DIVERGED,loss became NaN at step 0,") && Catch::Contains(",,inf,"));
  // The swept JSON holds commas and quotes, so CSV quotes it and doubles the quotes.
  CHECK_THAT(lines[2], Catch::Contains("\"{\"\"compressor\"\":\"\"topk\"\""));

  r = f.laconic("runs --experiment nope");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no experiment 'nope'") && Catch::Contains("fmnist, lm"));
}

TEST_CASE("show prints facts, config, summary and the per-epoch table of one run", "[cli][show]") {
  RecordedRuns f;
  auto r = f.laconic("show " + std::to_string(f.topk1));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("run " + std::to_string(f.topk1) + ": compressor=topk,ratio=0.01,seed=1"));
  CHECK_THAT(line_with(r.out, "status"), Catch::Contains("FINISHED"));
  CHECK_THAT(line_with(r.out, "attempts"), Catch::Contains("1"));
  CHECK_THAT(line_with(r.out, "compressor.ratio"), Catch::Contains("= 0.01"));
  CHECK_THAT(r.out, Catch::Contains("\"ratio\": 0.01") && Catch::Contains("\"workers\": 4"));
  // Summary: train_loss over 2 epochs x 3 steps x 4 workers.
  using Fields = std::vector<std::string>;
  CHECK(fields(line_starting(r.out, "train_loss ")) == Fields{"train_loss", "1.5", "1.5", "2", "1.75", "24", "0"});
  // Bytes as `runs` shows them, in decimal units.
  CHECK(fields(line_starting(r.out, "bytes_sent ")) ==
        Fields{keys::kBytesSent, "80", "B", "80", "B", "80", "B", "80", "B", "24", "0"});
  // Per epoch, counted from 1: epoch 2 has the final accuracy; 3 steps x 4 workers x 80 bytes = 960 B;
  // ratio 50x.
  const auto epoch2 = lines_of(r.out).back();
  CHECK_THAT(epoch2, Catch::StartsWith("2 ") && Catch::Contains("0.7000") && Catch::Contains("0.7500") &&
                         Catch::Contains("1.6000") && Catch::Contains("6.0s") && Catch::Contains("960 B") &&
                         Catch::Contains("50.0x"));

  r = f.laconic("show " + std::to_string(f.diverged));
  REQUIRE(r.status == 0);
  CHECK_THAT(line_with(r.out, "error"), Catch::Contains("loss became NaN at step 0"));
  CHECK(fields(line_starting(r.out, "train_loss ")) == Fields{"train_loss", "nan", "-", "-", "-", "0", "1"});

  r = f.laconic("show 999");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run 999") && Catch::Contains("5 runs with ids 1 to 5"));
}

TEST_CASE("show --format json holds the run's fields, summary and epochs in one object", "[cli][show]") {
  RecordedRuns f;
  auto r = f.laconic("show --format json " + std::to_string(f.topk1));
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["run"]["id"] == f.topk1);
  CHECK(doc["run"]["status"] == "FINISHED");
  CHECK(doc["run"]["config"]["workers"] == 4);  // embedded as an object, not as text
  CHECK(doc["run"]["swept"]["compressor"] == "topk");
  nlohmann::json train_loss;
  for (const auto& s : doc["summary"])
    if (s["key"] == "train_loss") train_loss = s;
  CHECK(train_loss["count"] == 24);
  CHECK(train_loss["mean"].get<double>() == Approx(1.75));
  REQUIRE(doc["epochs"].size() == 2);
  CHECK(doc["epochs"][1]["epoch"] == 1);
  CHECK(doc["epochs"][1]["test_accuracy"] == 0.7);
  CHECK(doc["epochs"][1][keys::kBytesSent] == 960.0);
  CHECK(doc["epochs"][1]["test_perplexity"] == "NaN");  // not recorded: NaN, spelled as everywhere

  r = f.laconic("show --format json " + std::to_string(f.diverged));
  REQUIRE(r.status == 0);
  const auto diverged = nlohmann::json::parse(r.out);
  nlohmann::json diverged_loss;
  for (const auto& s : diverged["summary"])
    if (s["key"] == "train_loss") diverged_loss = s;
  CHECK(diverged_loss["last"] == "NaN");
  CHECK(diverged_loss["mean"] == "NaN");  // no non-NaN value to average
  CHECK(diverged_loss["nan_count"] == 1);

  r = f.laconic("show --format csv " + std::to_string(f.topk1));
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("table or json") && Catch::Contains("export"));
}

TEST_CASE("compare puts runs side by side and marks the rows that differ", "[cli][compare]") {
  RecordedRuns f;
  const std::string ids = std::to_string(f.none) + " " + std::to_string(f.topk10);
  auto r = f.laconic("compare " + ids);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(lines_of(r.out).at(0),
             Catch::Contains("run " + std::to_string(f.none)) && Catch::Contains("run " + std::to_string(f.topk10)));
  CHECK_THAT(line_with(r.out, "compressor.name"),
             Catch::StartsWith("*") && Catch::Contains("none") && Catch::Contains("topk"));
  CHECK_THAT(line_with(r.out, "batch_size"), !Catch::StartsWith("*"));
  CHECK_THAT(line_with(r.out, "workers"), !Catch::StartsWith("*"));
  CHECK_THAT(line_with(r.out, "test_accuracy (last)"),
             Catch::StartsWith("*") && Catch::Contains("0.8") && Catch::Contains("0.85"));
  CHECK_THAT(line_with(r.out, "bytes_sent (sum)"), Catch::Contains("48.0 kB") && Catch::Contains("9.60 kB"));
  CHECK_THAT(line_with(r.out, "compression_ratio"), Catch::Contains("1.00x") && Catch::Contains("5.00x"));
  CHECK_THAT(r.out, Catch::Contains("rows differ (marked *)"));

  r = f.laconic("compare --diff-only " + ids);
  REQUIRE(r.status == 0);
  CHECK(line_with(r.out, "batch_size").empty());
  CHECK_FALSE(line_with(r.out, "optimizer.lr").empty());
  for (const auto& line : lines_of(r.out))
    if (line.find("run ") != 0 && line.find("diff") != 0 && line.find("rows differ") == std::string::npos)
      CHECK_THAT(line, Catch::StartsWith("*"));

  r = f.laconic("compare " + std::to_string(f.none));
  CHECK(r.status == 2);
  r = f.laconic("compare 1 77");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run 77"));
}

TEST_CASE("best ranks runs by a metric's final value, lower first for losses", "[cli][best]") {
  RecordedRuns f;
  auto r = f.laconic("best --experiment fmnist");
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0] == "top 4 of 4 runs with test_accuracy, by its final (last recorded) value, higher is better");
  CHECK_THAT(lines[2],
             Catch::StartsWith("1 ") && Catch::Contains("compressor=topk,ratio=0.1,seed=1") && Catch::EndsWith("0.85"));
  CHECK_THAT(lines[3], Catch::StartsWith("2 ") && Catch::Contains("compressor=none"));
  CHECK_THAT(lines[5], Catch::StartsWith("4 ") && Catch::Contains("DIVERGED") && Catch::EndsWith("nan"));

  r = f.laconic("best --metric test_loss --experiment fmnist --top 2 --format csv");
  REQUIRE(r.status == 0);
  lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "rank,id,experiment,run,status,test_loss");
  CHECK(lines[1] == "1," + std::to_string(f.topk10) + ",fmnist,\"compressor=topk,ratio=0.1,seed=1\",FINISHED,0.45");

  r = f.laconic("best --metric test_accuracy --by max --goal min --where compressor=topk --format json");
  REQUIRE(r.status == 0);
  const auto json = nlohmann::json::parse(r.out);
  REQUIRE(json.size() == 2);
  CHECK(json[0]["id"] == f.topk1);
  CHECK(json[0]["test_accuracy:max"].get<double>() == 0.70);

  r = f.laconic("best --metric test_acc");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("no run recorded metric 'test_acc'; did you mean 'test_accuracy'?") &&
                        Catch::Contains("recorded keys: bytes_dense, bytes_sent") &&
                        Catch::Contains("test_perplexity"));
  r = f.laconic("best --goal up");
  CHECK(r.status == 2);
}

TEST_CASE("the read commands explain a missing database and appear in --help", "[cli][errors]") {
  const auto dir = make_temp_dir();
  for (const std::string command : {"runs", "show 1", "compare 1 2", "query \"SELECT 1\"", "export", "best"}) {
    auto r = run_laconic(dir, command + " --db missing.db", 30);
    INFO(command);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("database missing.db does not exist"));
  }
  auto help = run_laconic(dir, "--help", 30);
  for (const char* command : {"show", "compare", "query", "export", "best"})
    CHECK_THAT(help.out, Catch::Contains(command));
  auto best = run_laconic(dir, "best --help", 30);
  CHECK_THAT(best.out, Catch::Contains("--top") && Catch::Contains("10") && Catch::Contains("test_accuracy"));
  auto unknown = run_laconic(dir, "runs --no-such-flag", 30);
  CHECK(unknown.status == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("best --by configuration ranks configurations by the mean over seeds, with std and n", "[cli][best]") {
  const auto dir = make_temp_dir();
  {
    auto database = storage::Database::open(dir + "/t.db");
    storage::Recorder recorder(*database);
    const auto e = recorder.add_experiment("seeds", "seeds.lua", "h");
    // none: 0.80 and 0.84 over two seeds; topk 1%: 0.90 on one seed and 0.70 on the other.
    const struct {
      const char* compressor;
      double ratio;
      std::int64_t seed;
      double accuracy;
    } runs[] = {{"none", 0, 1, 0.80}, {"none", 0, 2, 0.84}, {"topk", 0.01, 1, 0.90}, {"topk", 0.01, 2, 0.70}};
    for (const auto& r : runs) {
      RunConfig c = config_of("seeds", r.compressor, r.ratio, 2, 0.1);
      c.seed = r.seed;
      c.swept["seed"] = r.seed;
      c.name.replace(c.name.find("seed=1"), 6, "seed=" + std::to_string(r.seed));
      const auto id = recorder.add_run(e, c);
      recorder.start_run(id);
      recorder.metrics_sink(id)->record({"test_accuracy", 0, 0, 0, 1.0, r.accuracy});
      recorder.finish_run(id, storage::RunStatus::Finished);
    }
  }
  auto r = run_laconic(dir, "best --by configuration --db t.db", 60);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK_THAT(lines[0], Catch::StartsWith("top 2 of 2 configurations (4 runs with test_accuracy), by the mean"));
  // none: mean 0.82, std 0.02828; topk: mean 0.80, std 0.1414. Higher mean first.
  CHECK(fields(lines[2]) ==
        std::vector<std::string>{"1", "seeds", "compressor=none", "2", "0.82", "0.02828", "1", "2"});
  CHECK(fields(lines[3]) ==
        std::vector<std::string>{"2", "seeds", "compressor=topk,ratio=0.01", "2", "0.8", "0.1414", "3", "4"});
  r = run_laconic(dir, "best --by configuration --format json --db t.db", 60);
  REQUIRE(r.status == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json[0]["mean"].get<double>() == Approx(0.82));
  CHECK(json[1]["std"].get<double>() == Approx(0.141421356));
  CHECK(json[1]["n"] == 2);
  r = run_laconic(dir, "best --by seed --db t.db", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown grouping 'seed'; known: run, configuration"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("every table shows bytes in decimal units and metrics with 4 significant digits", "[cli][format]") {
  RecordedRuns f;
  auto r = f.laconic("runs --experiment fmnist --metric bytes_sent:sum --metric train_loss:mean");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(line_with(r.out, "compressor=none"), Catch::Contains("48.0 kB") && Catch::Contains("1.75"));
  r = f.laconic("best --metric bytes_sent --value sum --experiment fmnist");
  REQUIRE(r.status == 0);
  CHECK_THAT(line_with(r.out, "ratio=0.01"), Catch::EndsWith("1.92 kB"));
  r = f.laconic("best --metric bytes_sent --value sum --experiment fmnist --format csv");
  CHECK_THAT(line_with(r.out, "ratio=0.01"), Catch::EndsWith(",1920"));  // exact in csv
  r = f.laconic("compare " + std::to_string(f.none) + " " + std::to_string(f.topk1) + " --format csv");
  CHECK_THAT(line_with(r.out, "bytes_sent (sum)"), Catch::EndsWith(",48000,1920"));
  r = f.laconic("show " + std::to_string(f.none));
  CHECK(fields(line_starting(r.out, "time_step ")) ==
        std::vector<std::string>{"time_step", "0.05", "0.05", "0.05", "0.05", "12", "0"});
}

TEST_CASE("statuses are accepted in any case, final metrics work in --where, --help has no empty defaults",
          "[cli][runs]") {
  RecordedRuns f;
  auto r = f.laconic("runs --status finished");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 5);  // header + none, topk1, topk10, lm
  r = f.laconic("runs --status Diverged");
  CHECK(lines_of(r.out).size() == 2);
  r = f.laconic("runs --status finshed");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown run status 'finshed'"));

  r = f.laconic("runs --experiment fmnist --where 'test_accuracy>0.75'");
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 3);  // none (0.80) and topk 10% (0.85)
  CHECK_THAT(r.out, Catch::Contains("compressor=none") && Catch::Contains("ratio=0.1,"));
  r = f.laconic("runs --experiment fmnist --where 'test_loss<=0.55' --where 'compressor!=none'");
  REQUIRE(r.status == 0);
  CHECK(lines_of(r.out).size() == 2);  // topk 10% only; the diverged run's loss is inf
  r = f.laconic("runs --where 'ratio<0.05'");
  CHECK(lines_of(r.out).size() == 2);  // topk 1%

  for (const std::string command :
       {"--help", "run --help", "runs --help", "best --help", "report --help", "export --help", "check --help"}) {
    r = run_laconic(f.dir, command, 30);
    INFO(command << "\n" << r.out);
    CHECK(r.status == 0);
    CHECK(r.out.find("=[]") == std::string::npos);
    CHECK(r.out.find("=\"\"") == std::string::npos);
  }
  r = run_laconic(f.dir, "run --help", 30);
  CHECK_THAT(r.out, Catch::Contains("--progress-every") && Catch::Contains("=30") && Catch::Contains("--quiet"));
}

TEST_CASE("laconic --version names laconic, its git description, the libraries' versions and CUDA", "[cli][version]") {
  const auto dir = make_temp_dir();
  const auto r = run_laconic(dir, "--version", 30);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 6);
  CHECK_THAT(lines[0], Catch::StartsWith("laconic 0.") && Catch::Contains(" (git "));
  CHECK_THAT(lines[1], Catch::StartsWith("LibTorch 1."));
  CHECK_THAT(lines[2], Catch::StartsWith("Gloo "));
  CHECK_THAT(lines[3], Catch::StartsWith("Lua 5.4"));
  CHECK_THAT(lines[4], Catch::StartsWith("SQLite 3."));
  // Debian's LibTorch has no CUDA; PyTorch's own may (CAFFE2_USE_CUDA at configure time).
  CHECK_THAT(lines[5], Catch::StartsWith("CUDA: LibTorch built with") && Catch::Contains("compressor kernels"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("read commands leave the directory as they found it, stop a query past its time, and name a missing file",
          "[cli][read]") {
  RecordedRuns f;  // its writer closed: the file alone, no WAL beside it
  std::filesystem::copy_file(f.db, f.dir + "/copy.db");
  const auto size = std::filesystem::file_size(f.dir + "/copy.db");
  const auto mtime = std::filesystem::last_write_time(f.dir + "/copy.db");
  for (const char* command : {"show 1", "runs", "query \"SELECT count(*) FROM runs\"", "best"}) {
    const auto r = run_laconic(f.dir, std::string(command) + " --db copy.db", 60);
    INFO(command << "\n" << r.err);
    CHECK(r.status == 0);
    CHECK_FALSE(std::filesystem::exists(f.dir + "/copy.db-wal"));
    CHECK_FALSE(std::filesystem::exists(f.dir + "/copy.db-shm"));
  }
  CHECK(std::filesystem::file_size(f.dir + "/copy.db") == size);
  CHECK(std::filesystem::last_write_time(f.dir + "/copy.db") == mtime);

  const auto started = std::chrono::steady_clock::now();
  auto r = f.laconic(
      "query --timeout 1 \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c\"");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("the query ran for more than 1 s and was stopped (--timeout SECONDS"));
  CHECK(took < 30);

  r = run_laconic(f.dir, "report fmnist --db missing.db", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("database missing.db does not exist"));
  CHECK_FALSE(std::filesystem::exists(f.dir + "/missing.db"));
}
