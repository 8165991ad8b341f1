// The report's answer (reports/answer.hpp) against hand computation: the target tied to the
// best dense configuration, "reached by k of n", the accuracy cost with Welch's interval, the
// noise that turns a verdict into "within noise", repeats of a seed, and per-row targets.
#include <catch2/catch.hpp>

#include "reports/report.hpp"
#include "reports/stats.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {

const GnuplotOptions kNoFigures{"/nonexistent/gnuplot", 5};

struct Recorded {
  TempDir dir;
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::Recorder> recorder;
  std::int64_t experiment = 0;

  explicit Recorded(const std::string& tag)
      : dir(tag), db(storage::Database::open(dir.file("runs.db"))), recorder(new storage::Recorder(*db)) {
    experiment = recorder->add_experiment("answer", "answer.lua", "cafe");
  }
  std::int64_t add(const RunSpec& spec) { return record_run(*db, *recorder, experiment, "answer", spec); }
  std::string markdown(const ReportOptions& options) {
    return read_text(write_report(*db, "answer", dir.file("out"), options).markdown);
  }
  std::string csv(const std::string& table) { return read_text(dir.file("out/tables/" + table + ".csv")); }
};

}  // namespace

TEST_CASE("the default target is the best dense configuration less 0.5 points, so losing accuracy never wins",
          "[reports][answer]") {
  Recorded r("answer-default");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.4, 0.84}));  // one point below dense: below the target too
  const auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  CHECK(paths.target == Approx(0.845));
  REQUIRE(paths.targets.size() == 1);
  CHECK(paths.targets[0] == "test_accuracy >= 0.8450 (none reached 0.8500 on average, less 0.5 points)");
  const std::string md = read_text(paths.markdown);
  INFO(md);
  // The answer comes first, before every other section.
  CHECK(md.find("## The answer") < md.find("## Final test accuracy"));
  CHECK_THAT(md, Catch::Contains("Only dense reached the target in all its runs: none, "));
  CHECK_THAT(md, Catch::Contains("Never a winner, since not every run reached the target: topk ratio=0.01 reached "
                                 "it in 0 of 1 runs and costs 1.00 points (no interval: one seed)."));
  CHECK_THAT(md, !Catch::Contains("use topk"));
  CHECK_THAT(r.csv("answer"), Catch::Contains("topk ratio=0.01,0,1,0.84,1,,,,not reached (0/1 runs)"));
  CHECK_THAT(r.csv("pays_off"), Catch::Contains(",not reached (0/1 runs),"));
}

TEST_CASE("a configuration that reached the target in some of its runs is never called faster", "[reports][answer]") {
  Recorded r("answer-some");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(dense_with_messages(2, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.86, 0.86}));  // reaches 0.845 after the first epoch: far sooner than dense
  r.add(topk_with_messages(2, {0.70, 0.80}));  // never reaches it
  const std::string md = r.markdown({.gnuplot = kNoFigures});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| topk ratio=0.01 | 1/2 |"));
  CHECK_THAT(md, Catch::Contains("topk ratio=0.01 reached it in 1 of 2 runs and costs"));
  CHECK_THAT(r.csv("pays_off"), Catch::Contains(",not reached (1/2 runs),"));
  CHECK_THAT(r.csv("answer"), !Catch::Contains("faster"));
}

TEST_CASE("the accuracy cost carries Welch's 95% interval over seeds", "[reports][answer]") {
  // Dense 0.85 and 0.87, Top-k 0.80 and 0.84: cost 4 points. Variances of the means 0.0001 and
  // 0.0004, se 0.02236, Welch's df 1.47 -> t(1) = 12.706: half-width 28.41 points.
  const Stats dense_stats = stats_of({0.85, 0.87}), topk_stats = stats_of({0.80, 0.84});
  CHECK(welch_ci95_half_width(topk_stats, dense_stats) == Approx(0.28412).epsilon(1e-3));
  Recorded r("answer-welch");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(dense_with_messages(2, {0.5, 0.87}));
  r.add(topk_with_messages(1, {0.5, 0.80}));
  r.add(topk_with_messages(2, {0.5, 0.84}));
  const std::string md = r.markdown({.target = 0.5, .gnuplot = kNoFigures});
  CHECK_THAT(md, Catch::Contains("| costs 4.00 points \\[-24.41, 32.41\\] |"));
}

TEST_CASE("a difference the machine's noise could make is called within noise, by bandwidth", "[reports][answer]") {
  // Both reach 0.7 at step 4. Top-k's compute is 26% below dense's although no compressor
  // changes compute: its time is widened by 4 steps x 0.009 s, more than the 0.02 s it gains
  // where communication costs nothing, but far less than what it saves on a slow link.
  Recorded r("answer-noise");
  r.add(dense_with_messages(1, {0.5, 0.75}));
  RunSpec disturbed = topk_with_messages(1, {0.5, 0.75});
  disturbed.forward = 0.001;
  r.add(disturbed);
  const std::string md =
      r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("10Mbit"), parse_link("100Gbit")}});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("compute -26% against dense, which no compressor changes"));
  CHECK_THAT(md, Catch::Contains("| within noise (-14%) |"));  // on 100 Gbit
  const std::string answer = r.csv("answer");
  CHECK_THAT(answer, Catch::Contains(",faster (-78%),within noise (-14%),faster up to "));
  CHECK_THAT(answer, Catch::Contains("; within noise from "));
  CHECK_THAT(r.csv("other_links"), Catch::Contains("within noise (-14%)"));
}

TEST_CASE("a run on a host busier than its cores widens its noise", "[reports][answer]") {
  Recorded r("answer-busy");
  r.add(dense_with_messages(1, {0.5, 0.75}));
  const std::int64_t busy = r.add(topk_with_messages(1, {0.5, 0.75}));
  r.recorder->record_fact(busy, "cores", "2");
  r.recorder->record_fact(busy, "host_demand", "3.00");
  const std::string md = r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("100Gbit")}});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("topk ratio=0.01: host busier than its cores (x1.50)"));
  CHECK_THAT(r.csv("answer"), Catch::Contains("within noise"));
}

TEST_CASE("--tolerance moves the default target; --target sets it for every row", "[reports][answer]") {
  Recorded r("answer-tolerance");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.4, 0.84}));
  auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures, .tolerance = 2.0});
  CHECK(paths.target == Approx(0.83));
  CHECK(paths.targets[0] == "test_accuracy >= 0.8300 (none reached 0.8500 on average, less 2 points)");
  CHECK_THAT(read_text(paths.markdown), !Catch::Contains("Never a winner"));
  paths = write_report(*r.db, "answer", r.dir.file("out"), {.target = 0.6, .gnuplot = kNoFigures});
  CHECK(paths.targets[0] == "test_accuracy >= 0.6000 (--target)");
}

TEST_CASE("repeats of a seed add samples of time, not of accuracy", "[reports][answer]") {
  Recorded r("answer-repeats");
  RunSpec first = dense_with_messages(1, {0.5, 0.85});
  RunSpec again = first;
  again.name += ",repeat=1";
  again.epoch_time = {20, 24};
  r.add(first);
  r.add(again);
  const std::string md = r.markdown({.target = 0.8, .gnuplot = kNoFigures});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| model=lenet5, workers=2 | 0.8500 (n=1) |"));  // one seed
  CHECK_THAT(md, Catch::Contains("| none | 2/2 |"));                              // two runs reached it
}

TEST_CASE("each row of the grid has its own target, from its own dense configuration", "[reports][answer]") {
  Recorded r("answer-rows");
  for (const char* model : {"lenet5", "mlp"}) {
    RunSpec d = dense_with_messages(1, {0.5, std::string(model) == "mlp" ? 0.9 : 0.8});
    d.model = model;
    d.swept["model"] = Value{std::string(model)};
    d.name = std::string("model=") + model + "," + d.name;
    r.add(d);
  }
  const auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  REQUIRE(paths.targets.size() == 2);
  CHECK(paths.targets[0] ==
        "model=lenet5, workers=2: test_accuracy >= 0.7950 (none reached 0.8000 on average, "
        "less 0.5 points)");
  CHECK(paths.targets[1] ==
        "model=mlp, workers=2: test_accuracy >= 0.8950 (none reached 0.9000 on average, "
        "less 0.5 points)");
  CHECK_THAT(read_text(paths.markdown), Catch::Contains("| target |"));  // a column in time to target
}

TEST_CASE("the page opens with a table of contents and folds the explanations away", "[reports][answer]") {
  Recorded r("answer-page");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.4, 0.84}));
  const auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  const std::string html = read_text(paths.html);
  CHECK(html.find("<nav class=\"toc\">") < html.find("<section id=\"answer\">"));
  CHECK_THAT(html, Catch::Contains("<li><a href=\"#does-it-pay-off\">Does it pay off?</a></li>"));
  CHECK_THAT(html, Catch::Contains("<section id=\"does-it-pay-off\">"));
  CHECK_THAT(html, Catch::Contains("<details><summary>How this is computed</summary>"));
  const std::string md = read_text(paths.markdown);
  CHECK_THAT(md, Catch::Contains("1. [The answer](#answer)"));
  CHECK_THAT(md, Catch::Contains("<a id=\"time-and-bytes-to-target\"></a>"));
}

TEST_CASE("eight configurations get eight line types apart in colour and dash, and keys outside the plots",
          "[reports][figures]") {
  Recorded r("answer-eight");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  for (int i = 1; i < 8; ++i) {
    RunSpec spec = topk_with_messages(1, {0.4, 0.8});
    const double ratio = 0.01 * i;
    spec.name = "compressor=topk,ratio=" + std::to_string(ratio) + ",seed=1";
    spec.swept["compressor.ratio"] = Value{ratio};
    spec.compressor_fields = {{"ratio", Value{ratio}}};
    r.add(spec);
  }
  r.markdown({.target = 0.7, .gnuplot = kNoFigures});
  const std::string driver = read_text(r.dir.file("out/figures/figures.gp"));
  CHECK_THAT(driver, Catch::Contains("set linetype 8 linecolor rgb '#999999' linewidth 2 dashtype 3") &&
                         Catch::Contains("set linetype cycle 10"));
  const std::string compression = read_text(r.dir.file("out/figures/metric_vs_compression.gp"));
  CHECK_THAT(compression, Catch::Contains("with yerrorbars linetype 8 ") && Catch::Contains("set key outside"));
  CHECK_THAT(compression, !Catch::Contains("set label"));  // named in the key, not beside the points
  CHECK_THAT(read_text(r.dir.file("out/figures/convergence_epoch.gp")), Catch::Contains("set key outside"));
  CHECK_THAT(read_text(r.dir.file("out/figures/pays_off.gp")), Catch::Contains("with lines linetype 8 "));
}

TEST_CASE("a row without a dense configuration takes its best one for the target, and says so", "[reports][answer]") {
  Recorded r("answer-no-dense");
  RunSpec coarse = topk_with_messages(1, {0.8, 0.86});
  coarse.name = "compressor=topk,ratio=0.1,seed=1";
  coarse.swept["compressor.ratio"] = Value{0.1};
  coarse.compressor_fields = {{"ratio", Value{0.1}}};
  r.add(coarse);
  r.add(topk_with_messages(1, {0.5, 0.84}));
  const auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  CHECK(paths.targets[0] ==
        "test_accuracy >= 0.8550 (no dense configuration in this row; the best one, topk ratio=0.1 reached 0.8600 on "
        "average, less 0.5 points)");
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("topk ratio=0.1 is fastest (") &&
                     Catch::Contains("no dense configuration of its row reached the target to compare it with."));
}
