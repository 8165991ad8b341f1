// `laconic report` as a user runs it: from a working directory, with relative, absolute, default
// and spaced output paths; every figure drawn, or a non-zero exit that names the cause.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "tests/reports/fixture.hpp"
#include "skip.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

const char* const kFigures[] = {"metric_vs_compression", "step_time", "convergence_epoch", "convergence_time",
                                "bits_per_parameter"};

bool gnuplot_available() { return std::system("gnuplot -e 'exit' >/dev/null 2>&1") == 0; }

// Two configurations of two epochs each, written through the storage library.
void record_two_runs(const std::string& db_path) {
  auto db = storage::Database::open(db_path);
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("figs", "figs.lua", "h");
  reports::testing::RunSpec dense;
  dense.name = "compressor=none,seed=1";
  dense.swept = {{"compressor", Value{std::string("none")}}};
  reports::testing::record_run(*db, recorder, e, "figs", dense);
  reports::testing::RunSpec sparse = dense;
  sparse.name = "compressor=topk,seed=1";
  sparse.compressor = "topk";
  sparse.swept = {{"compressor", Value{std::string("topk")}}};
  sparse.bytes_sent = sparse.payload_bytes = 5000;
  sparse.accuracy = {0.45, 0.7};
  reports::testing::record_run(*db, recorder, e, "figs", sparse);
}

int figures_in(const std::filesystem::path& dir) {
  int drawn = 0;
  for (const char* figure : kFigures)
    for (const char* extension : {".svg", ".png"}) {
      std::error_code error;
      drawn += std::filesystem::file_size(dir / "figures" / (std::string(figure) + extension), error) > 0 ? 1 : 0;
    }
  return drawn;
}

}  // namespace

TEST_CASE("laconic report draws every figure whatever the output path, relative or not", "[cli][report][needs-gnuplot]") {
  if (!gnuplot_available())
    LACONIC_SKIP("gnuplot is not installed (the test setup installs gnuplot-nox); nothing to draw with");
  const auto dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/work dir");
  const std::string work = dir + "/work dir";
  record_two_runs(work + "/runs.db");
  struct Case {
    std::string flags;
    std::string where;  // relative to `work`
  };
  const Case cases[] = {{"", "laconic-reports/figs"},
                        {"--out rep", "rep"},
                        {"--out ./nested/rep", "nested/rep"},
                        {"--out 'with space/r e p'", "with space/r e p"},
                        {"--out .", "."},
                        {"--out '" + dir + "/absolute'", "../absolute"}};
  for (const Case& c : cases) {
    INFO("laconic report figs " << c.flags);
    const auto r = run_laconic(work, "report figs --db runs.db " + c.flags, 120);
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("warning") == std::string::npos);
    CHECK(figures_in(std::filesystem::path(work) / c.where) == 10);
    CHECK(std::filesystem::exists(std::filesystem::path(work) / c.where / "index.html"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("laconic report exits 3 naming the cause when a figure cannot be drawn, unless allowed", "[cli][report]") {
  const auto dir = make_temp_dir();
  record_two_runs(dir + "/runs.db");
  auto r = run_laconic(dir, "report figs --db runs.db --out rep --gnuplot ./no-such-gnuplot", 60);
  CHECK(r.status == 3);
  CHECK_THAT(r.err, Catch::Contains("laconic: warning: figure step_time missing: cannot run gnuplot "
                                    "'./no-such-gnuplot': No such file or directory"));
  CHECK_THAT(r.err, Catch::Contains("5 figures could not be drawn") && Catch::Contains("--allow-missing-figures"));
  CHECK(std::filesystem::exists(dir + "/rep/index.html"));  // the tables are there regardless

  r = run_laconic(dir, "report figs --db runs.db --out rep --gnuplot ./no-such-gnuplot --allow-missing-figures", 60);
  CHECK(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("warning: figure step_time missing"));

  // The log gnuplot writes cannot be created: that, not gnuplot, is named.
  std::filesystem::create_directories(dir + "/blocked/figures/gnuplot.log");
  r = run_laconic(dir, "report figs --db runs.db --out blocked", 60);
  CHECK(r.status == 3);
  CHECK_THAT(r.err, Catch::Contains("cannot write the gnuplot log blocked/figures/gnuplot.log: Is a directory"));
  std::filesystem::remove_all(dir);
}

namespace {

bool chromium_available() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

// scripts/check-report-in-chromium.sh on `page`: the browser decoded `figures` figures.
CommandResult check_in_chromium(const std::string& dir, const std::string& page, int figures) {
  const std::string out = dir + "/.chromium.out";
  const std::string command = "cd '" + dir + "' && timeout 300 '" + std::string(LACONIC_SOURCE_DIR) +
                              "/scripts/check-report-in-chromium.sh' '" + page + "' --figures " +
                              std::to_string(figures) + " >'" + out + "' 2>&1";
  const int raw = std::system(command.c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  return r;
}

}  // namespace

TEST_CASE("headless Chromium shows every figure of a report, and tells a report without them",
          "[cli][report][needs-chromium]") {
  if (!gnuplot_available() || !chromium_available())
    LACONIC_SKIP("gnuplot or chromium is not installed (the test setup installs both); the page is not opened");
  const auto dir = make_temp_dir();
  record_two_runs(dir + "/runs.db");
  REQUIRE(run_laconic(dir, "report figs --db runs.db", 120).status == 0);
  auto r = check_in_chromium(dir, "laconic-reports/figs/index.html", 5);
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("chromium drew 5 of 5 figures; missing boxes: 0"));
  CHECK(std::filesystem::file_size(dir + "/laconic-reports/figs/screenshot.png") > 0);

  // The same check fails on a report whose figures are missing: it can tell.
  REQUIRE(run_laconic(dir, "report figs --db runs.db --out bare --gnuplot ./none --allow-missing-figures", 60).status ==
          0);
  r = check_in_chromium(dir, "bare/index.html", 5);
  CHECK(r.status == 1);
  CHECK_THAT(r.out, Catch::Contains("chromium drew 0 of 0 figures; missing boxes: 5"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the quickstart as the README runs it: a log with progress, a report with six drawn figures",
          "[cli][report][quickstart][slow][needs-chromium]") {
  const auto dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/experiments");
  std::filesystem::copy_file(std::string(LACONIC_SOURCE_DIR) + "/experiments/quickstart.lua",
                             dir + "/experiments/quickstart.lua");
  // Output to a log file, relative paths, the default database and report locations.
  const std::string command =
      "cd '" + dir + "' && timeout 900 '" + LACONIC_BINARY + "' run experiments/quickstart.lua > log 2>&1";
  const int raw = std::system(command.c_str());
  const std::string log = read_file(dir + "/log");
  INFO(log);
  REQUIRE(WIFEXITED(raw));
  REQUIRE(WEXITSTATUS(raw) == 0);
  CHECK_THAT(log, Catch::Contains("[1/2] quickstart compressor=none,seed=1: started"));
  CHECK_THAT(log, Catch::Contains("[1/2] quickstart compressor=none,seed=1  epoch 1/1  step ") &&
                      Catch::Contains("test_accuracy 0.") && Catch::Contains("left: run 0s, sweep "));
  CHECK_THAT(log, Catch::Contains("quickstart: 2 runs, 2 finished, 0 failed"));
  // No warning but the one a busy machine may earn (other processes took cores meanwhile): the
  // quickstart's 2 ranks fit 2 cores.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("warning") != std::string::npos) CHECK_THAT(line, Catch::Contains("the host was busier than its"));

  const auto report = run_laconic(dir, "report quickstart", 120);
  INFO(report.out << report.err);
  CHECK(report.status == 0);
  CHECK(report.err.empty());
  CHECK(figures_in(dir + "/laconic-reports/quickstart") == 10);
  // Its runs recorded their messages: "Does it pay off?" is there, with its figure.
  std::error_code missing;
  CHECK(std::filesystem::file_size(dir + "/laconic-reports/quickstart/figures/pays_off.png", missing) > 0);
  const std::string md = read_file(dir + "/laconic-reports/quickstart/report.md");
  CHECK_THAT(md, Catch::Contains("## Does it pay off?"));
  // The answer comes first, and Top-k 1%, which ends below none less 0.5 points, never reaches the target.
  CHECK(md.find("## The answer") < md.find("## Final test accuracy"));
  CHECK_THAT(md, Catch::Contains("Target test accuracy \\>= ") && Catch::Contains(" (none reached ") &&
                     Catch::Contains(" on average, less 0.5 points)"));
  const auto answer = md.substr(md.find("## The answer"), md.find("## Final test accuracy") - md.find("## The answer"));
  INFO(answer);
  {
    // README: Top-k 1% ends about 2.8 points below none, under none less 0.5 points: not reached.
    auto db = storage::Database::open_read_only(dir + "/laconic.db");
    const auto runs = storage::list_runs(*db);
    REQUIRE(runs.size() == 2);
    const bool below = runs[1].final_test_accuracy < runs[0].final_test_accuracy - 0.005;
    CHECK(below == (answer.find("Against none: topk") != std::string::npos &&
                    answer.find(" not reached (0 of 1 runs)") != std::string::npos));
    if (below) CHECK_THAT(answer, !Catch::Contains("use topk"));
  }
  if (!chromium_available()) {
    LACONIC_SKIP_PART("chromium is not installed (the test setup installs it); the page is not opened");
  } else {
    const auto r = check_in_chromium(dir, "laconic-reports/quickstart/index.html", 6);
    INFO(r.out);
    CHECK(r.status == 0);
  }
  // The same runs on links they never used: every step recorded its messages, so every cell
  // has a number; dense pays more for the slow link than Top-k 1%.
  const auto links = run_laconic(dir, "report quickstart --out what-if --link 10Mbit --link 10Gbit,5us", 120);
  INFO(links.out << links.err);
  CHECK(links.status == 0);
  const std::string csv = read_file(dir + "/what-if/tables/other_links.csv");
  // 10Mbit without a latency is projected at the runs' own (the quickstart's 50 us) and named so.
  CHECK_THAT(csv, Catch::StartsWith("configuration,\"step_s@10Mbit, 50 us\",\"versus_baseline@10Mbit, 50 us\","
                                    "\"step_s@10Gbit,5us\",\"versus_baseline@10Gbit,5us\"\r\n"));
  double dense_slow = 0, topk_slow = 0;
  std::istringstream rows(csv);
  std::string row;
  std::getline(rows, row);  // header
  int projected = 0;
  while (std::getline(rows, row)) {
    // configuration, step on 10Mbit, its verdict, step on 10Gbit,5us, its verdict.
    std::vector<std::string> cells;
    for (std::size_t begin = 0; begin <= row.size();) {
      const std::size_t end = std::min(row.find(',', begin), row.size());
      cells.push_back(row.substr(begin, end - begin));
      begin = end + 1;
    }
    REQUIRE(cells.size() == 5);
    const double slow = std::stod(cells[1]), fast = std::stod(cells[3]);
    CHECK(slow > fast);
    ++projected;
    (row.rfind("none", 0) == 0 ? dense_slow : topk_slow) = slow;
  }
  CHECK(projected == 2);
  CHECK(dense_slow > 2 * topk_slow);  // 232 MB against 4.65 MB at 10 Mbit/s
  const auto bad = run_laconic(dir, "report quickstart --out what-if --link 10Mbps", 60);
  CHECK(bad.status == 2);
  CHECK_THAT(bad.err, Catch::Contains("--link bandwidth must be a positive rate"));
  std::filesystem::remove_all(dir);
}
