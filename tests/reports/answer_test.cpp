// The report's answer (reports/answer.hpp) against hand computation: the baseline and the target
// tied to it, "reached by k of n", the accuracy cost with Welch's interval, intervals on the log
// scale, each verdict and what widens its noise, repeats of a seed, and per-row targets.
#include <catch2/catch.hpp>

#include "reports/curve_time.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/report.hpp"
#include "reports/report_model.hpp"
#include "reports/run_data.hpp"
#include "reports/stats.hpp"
#include "tests/reports/csv_cells.hpp"
#include "tests/reports/fixture.hpp"
#include "tests/reports/recorded.hpp"
#include "tests/reports/verdict_sweep.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

TEST_CASE("the default target is the baseline's final metric less 0.5 points, so losing accuracy never wins",
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
  CHECK_THAT(md, Catch::Contains("Baseline: none (the runs' configuration: baseline = none, the default)."));
  CHECK_THAT(md, Catch::Contains("no configuration beats the baseline beyond the noise: none reaches the target in "));
  // Two evaluations fit no curve: said so where the extrapolation would stand.
  CHECK_THAT(md, Catch::Contains("Against none: topk ratio=0.01 not reached (0 of 1 runs), no extrapolation: "));
  // What it lost, what it saved, and the tolerance that would accept the loss.
  CHECK_THAT(md, Catch::Contains("Final test accuracy against none: topk ratio=0.01 costs 1.00 points (no interval: "
                                 "one seed), its runs sending 100x fewer bytes than dense fp32 (--tolerance 1.5 "
                                 "would accept that loss and judge it by its time)."));
  CHECK_THAT(md, !Catch::Contains("use topk"));
  CHECK_THAT(r.csv("answer"),
             Catch::Contains("topk ratio=0.01,\"1Gbit, 50us\",0,1,0.84,1,,,,,not reached (0 of 1 runs),,,,"));
  CHECK_THAT(r.csv("pays_off"), Catch::Contains(",not reached (0 of 1 runs),"));
}

TEST_CASE("a configuration that reached the target in some of its runs is inconclusive, never faster",
          "[reports][answer]") {
  Recorded r("answer-some");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(dense_with_messages(2, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.86, 0.86}));  // reaches 0.845 after the first epoch: far sooner than dense
  r.add(topk_with_messages(2, {0.70, 0.80}));  // never reaches it
  const std::string md = r.markdown({.gnuplot = kNoFigures});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| topk ratio=0.01 | 1/2 |"));
  // Its time is the run's that reached it, said to be one of two; the verdict says why it is open.
  CHECK_THAT(md, Catch::Contains(" s (1 of 2 runs reached it) |"));
  CHECK_THAT(md, Catch::Contains("Against none: topk ratio=0.01 inconclusive (-") &&
                     Catch::Contains("1 of 2 runs of topk ratio=0.01 reached the target)."));
  // No point estimates either: the run that never reached the target may have needed any time.
  CHECK_THAT(r.csv("pays_off"), Catch::Contains(",inconclusive at every bandwidth from 10 Mbit/s to 100 Gbit/s,,\r\n"));
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

TEST_CASE("a difference the machine's noise could make is not a verdict, by bandwidth", "[reports][answer]") {
  // Two seeds of each reach 0.7 at step 4. Top-k's compute is 27% below the baseline's although no
  // compressor changes compute: its interval is widened by that much of its step, more than the
  // 15% it gains where communication costs nothing (no number of seeds can decide that here), far
  // less than what it saves on a slow link.
  Recorded r("answer-noise");
  for (std::int64_t seed : {1, 2}) {
    RunSpec dense = dense_with_messages(seed, {0.5, 0.75});
    dense.forward = seed == 1 ? 0.010 : 0.011;
    r.add(dense);
    RunSpec disturbed = topk_with_messages(seed, {0.5, 0.75});
    disturbed.forward = seed == 1 ? 0.001 : 0.0011;
    r.add(disturbed);
  }
  const std::string md =
      r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("10Mbit"), parse_link("100Gbit")}});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("topk ratio=0.01: compute -27% against the baseline, which no compressor changes"));
  const std::string answer = r.csv("answer");
  CHECK_THAT(answer, Catch::Contains("\"faster (-78% [-84%, -70%])\",\"inconclusive (-15% [-46%, +33%]; more seeds "
                                     "would not decide it on this machine's noise)\""));  // 10 Mbit/s, 100 Gbit/s
  CHECK_THAT(answer, Catch::Contains(",faster up to 100 Mbit/s; inconclusive from "));
  CHECK_THAT(r.csv("other_links"), Catch::Contains("inconclusive (-15% [-46%, +33%]"));
}

TEST_CASE("a run on a host busier than its cores widens its interval", "[reports][answer]") {
  // Where communication costs nothing Top-k's 4 ms of compression make it slower by 12%, more
  // than two quiet seeds' spread; on a host 1.5x busier than its cores that is no longer a verdict.
  Recorded r("answer-busy");
  std::int64_t busy = 0;
  for (std::int64_t seed : {1, 2}) {
    RunSpec dense = dense_with_messages(seed, {0.5, 0.75}), topk = topk_with_messages(seed, {0.5, 0.75});
    dense.forward = topk.forward = seed == 1 ? 0.010 : 0.0101;
    r.add(dense);
    busy = r.add(topk);
  }
  std::string md = r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("100Gbit")}});
  CHECK_THAT(r.csv("answer"), Catch::Contains(",\"slower (+12% [+9%, +14%])\","));
  r.recorder->record_fact(busy, "cores", "2");
  r.recorder->record_fact(busy, "host_demand", "3.00");
  md = r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("100Gbit")}});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("topk ratio=0.01: host busier than its cores (x1.50)"));
  CHECK_THAT(r.csv("answer"), !Catch::Contains("slower (") && Catch::Contains("\"inconclusive (+12% [-27%, +71%]"));
}

TEST_CASE("fp16 is judged like any compressor, and within noise where its interval lies inside 1 +/- 10%",
          "[reports][answer]") {
  // fp16 computes what none computes and sends half the bytes: on 100 Gbit/s the two steps differ
  // by 0.01%, and two seeds 0.3% apart give an interval well inside +/- 10%. On 10 Mbit/s half
  // the bytes make it faster.
  Recorded r("answer-fp16");
  for (std::int64_t seed : {1, 2}) {
    RunSpec dense = dense_with_messages(seed, {0.5, 0.75});
    RunSpec fp16 = dense;
    fp16.name = "compressor=fp16,seed=" + std::to_string(seed);
    fp16.swept = {{"compressor", Value{std::string("fp16")}}};
    fp16.compressor = "fp16";
    fp16.link_bytes = 62500;
    dense.forward = fp16.forward = seed == 1 ? 0.010 : 0.0101;
    r.add(dense);
    r.add(fp16);
  }
  const std::string md =
      r.markdown({.target = 0.7, .gnuplot = kNoFigures, .links = {parse_link("10Mbit"), parse_link("100Gbit")}});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| fp16 | 2/2 |"));
  CHECK_THAT(r.csv("answer"), Catch::Contains("\"faster (-38% [-38%, -37%])\",\"within noise (-0% [-3%, +3%])\""));
}

TEST_CASE("two seeds that cannot tell a small difference apart are inconclusive, with how many more seeds would",
          "[reports][answer]") {
  // On 1Gbit, 50us every run reaches 0.7 at step 4 (3 steps taken). Steps: none 0.0361683 and
  // 0.0401683 s (compute 0.035 and 0.039, 2 messages of 125 kB), Top-k 0.0392107 and 0.0432107
  // (the same compute, 4 ms of compression, 4 messages of 1.25 kB): +8.0%. The log times' sample
  // std: 0.0687 and 0.0742; Welch's se 0.0715, df 1.99 -> t(1) = 12.706: exp(0.0769 -/+ 0.908) - 1 =
  // [-56%, +168%], inconclusive. With n
  // seeds of each, t(2n - 2) x sqrt((0.0687^2 + 0.0742^2) / n) falls below ln(1.080) = 0.0770 at
  // n = 8 (2.145 x 0.0357 = 0.0767; at n = 7, 2.179 x 0.0382 = 0.0833): 6 more.
  Recorded r("answer-seeds");
  for (std::int64_t seed : {1, 2}) {
    RunSpec dense = dense_with_messages(seed, {0.5, 0.75});
    RunSpec topk = topk_with_messages(seed, {0.5, 0.75});
    dense.forward = topk.forward = seed == 1 ? 0.010 : 0.014;
    r.add(dense);
    r.add(topk);
  }
  const std::string md = r.markdown({.target = 0.7, .gnuplot = kNoFigures});
  INFO(md);
  CHECK_THAT(md, Catch::Contains("Against none: topk ratio=0.01 inconclusive (+8% \\[-56%, +168%\\]; about 6 more "
                                 "seeds)."));
  // Each time's interval is on the log scale: never below zero.
  CHECK_THAT(r.csv("answer"), Catch::Contains("inconclusive (+8% [-56%, +168%]; about 6 more seeds)"));
}

TEST_CASE("a time's interval stays above zero however far apart its runs are", "[reports][answer]") {
  Recorded r("answer-skew");
  RunSpec fast = dense_with_messages(1, {0.5, 0.75}), slow = dense_with_messages(2, {0.5, 0.75});
  slow.forward = 2.0;  // 57 times the first seed's step
  r.add(fast);
  r.add(slow);
  r.add(topk_with_messages(1, {0.5, 0.75}));
  r.add(topk_with_messages(2, {0.5, 0.75}));
  r.markdown({.target = 0.7, .gnuplot = kNoFigures});
  const std::string answer = r.csv("answer");
  INFO(answer);
  // none's time and its interval; the arithmetic mean less t x its std would be far below zero
  // (t(1) = 12.7).
  const auto rows = csv_rows(answer);
  const double time = csv_value(rows, "none", "time_s"), low = csv_value(rows, "none", "time_low_s");
  CHECK(low > 0);
  CHECK(low < time);
  CHECK(csv_value(rows, "none", "time_high_s") > time);
}

TEST_CASE("the baseline is the one the experiment names, or --baseline; a name that is no configuration is refused",
          "[reports][answer]") {
  Recorded r("answer-baseline");
  RunSpec none = dense_with_messages(1, {0.5, 0.85});
  RunSpec fp16 = dense_with_messages(1, {0.5, 0.84});
  fp16.name = "compressor=fp16,seed=1";
  fp16.swept = {{"compressor", Value{std::string("fp16")}}};
  fp16.compressor = "fp16";
  none.baseline = fp16.baseline = "fp16";
  r.add(none);
  r.add(fp16);
  auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  CHECK(paths.targets[0] == "test_accuracy >= 0.8350 (fp16 reached 0.8400 on average, less 0.5 points)");
  std::string md = read_text(paths.markdown);
  CHECK_THAT(md, Catch::Contains("Baseline: fp16 (the runs' configuration: baseline = fp16)."));
  CHECK_THAT(md, Catch::Contains("Final test accuracy against fp16: none gains 1.00 points"));
  paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures, .baseline = "none"});
  md = read_text(paths.markdown);
  CHECK_THAT(md, Catch::Contains("Baseline: none (--baseline)."));
  CHECK_THAT(md, Catch::Contains("Final test accuracy against none: fp16 costs 1.00 points"));
  CHECK_THROWS_WITH(write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures, .baseline = "fp32"}),
                    "--baseline 'fp32' is no configuration's compressor; the compared ones: 'none', 'fp16'");
}

TEST_CASE("--tolerance moves the default target; --target sets it for every row", "[reports][answer]") {
  Recorded r("answer-tolerance");
  r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.4, 0.84}));
  auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures, .tolerance = 2.0});
  CHECK(paths.target == Approx(0.83));
  CHECK(paths.targets[0] == "test_accuracy >= 0.8300 (none reached 0.8500 on average, less 2 points)");
  CHECK_THAT(read_text(paths.markdown), Catch::Contains("Against none: topk ratio=0.01 inconclusive ("));
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

TEST_CASE("a row without a baseline takes its best configuration for the target, and says so", "[reports][answer]") {
  Recorded r("answer-no-dense");
  RunSpec coarse = topk_with_messages(1, {0.8, 0.86});
  coarse.name = "compressor=topk,ratio=0.1,seed=1";
  coarse.swept["compressor.ratio"] = Value{0.1};
  coarse.compressor_fields = {{"ratio", Value{0.1}}};
  r.add(coarse);
  r.add(topk_with_messages(1, {0.5, 0.84}));
  const auto paths = write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
  CHECK(paths.targets[0] ==
        "test_accuracy >= 0.8550 (no baseline in this row; the best configuration, topk ratio=0.1 reached 0.8600 on "
        "average, less 0.5 points)");
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("no configuration is judged: the row has no baseline (--baseline names one)."));
}

TEST_CASE("the verdict sweep of docs/reports.md gives every verdict, each with its reason", "[reports][answer]") {
  Recorded r("answer-verdicts");
  for (const RunSpec& spec : verdict_sweep()) r.add(spec);
  r.markdown({.gnuplot = kNoFigures});
  const std::string answer = r.csv("answer");
  INFO(answer);
  const auto verdict_of = [&](const std::string& label) {
    const auto at = answer.find("\n" + label + ",");
    REQUIRE(at != std::string::npos);
    return answer.substr(at + 1, answer.find('\n', at + 1) - at - 1);
  };
  CHECK_THAT(verdict_of("none"), Catch::Contains(",baseline,"));
  CHECK_THAT(verdict_of("fp16"), Catch::Contains("\"within noise ("));
  CHECK_THAT(verdict_of("topk"), Catch::Contains("\"faster ("));
  CHECK_THAT(verdict_of("powersgd"), Catch::Contains("\"slower ("));
  CHECK_THAT(verdict_of("qsgd"), Catch::Contains("\"inconclusive (") &&
                                     Catch::Contains("; 1 of 2 runs of qsgd reached the target)\""));
  CHECK_THAT(verdict_of("bf16"), Catch::Contains("\"inconclusive (") && Catch::Contains(" more seeds)\""));
  CHECK_THAT(verdict_of("signsgd"), Catch::Contains(",not reached (0 of 2 runs),"));
}

TEST_CASE("report A B of one file names the file once and the --set flags that separate them", "[reports][answer]") {
  TempDir dir("answer-two");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  for (const char* name : {"short", "long"}) {
    const auto e = recorder.add_experiment(name, "exp.lua", "cafe");
    for (RunSpec spec : {dense_with_messages(1, {0.5, 0.85}), topk_with_messages(1, {0.5, 0.84})}) {
      const auto run = record_run(*db, recorder, e, name, spec);
      recorder.record_fact(run, "overrides", std::string("name=") + name + (name[0] == 'l' ? " epochs=2" : ""));
    }
  }
  const std::string md =
      read_text(write_report(*db, std::vector<std::string>{"short", "long"}, dir.file("out"), {.gnuplot = kNoFigures})
                    .markdown);
  INFO(md);
  CHECK(md.find("- file: `exp.lua`") == md.rfind("- file: `exp.lua`"));
  CHECK_THAT(md, Catch::Contains("- overrides, short: name=short\n") &&
                     Catch::Contains("- overrides, long: name=long epochs=2\n"));
}

TEST_CASE("which of two values of a metric is better is decided by its direction, a NaN never better", "[reports]") {
  const TestMetric accuracy = test_metric_of({"test_accuracy", true});
  const TestMetric perplexity = test_metric_of({"test_perplexity", false});
  CHECK(accuracy.better(0.9, 0.8));
  CHECK_FALSE(accuracy.better(0.8, 0.9));
  CHECK(perplexity.better(80, 120));
  CHECK_FALSE(perplexity.better(120, 80));
  CHECK(accuracy.better(0.1, kNaN));  // anything measured beats nothing
  CHECK_FALSE(accuracy.better(kNaN, 0.1));
  CHECK_FALSE(accuracy.better(kNaN, kNaN));
  CHECK_FALSE(accuracy.better(0.8, 0.8));  // a tie keeps the first
  // The label names the split evaluated: perldoc's runs are judged on its validation split.
  CHECK(perplexity.label == "test perplexity");
  CHECK(test_metric_of({"test_perplexity", false, "validation"}).label == "validation perplexity");
}

TEST_CASE("the report's test metric and its direction are what the runs resolved, not guessed from the data",
          "[reports][answer]") {
  Recorded r("answer-resolved-metric");
  const std::int64_t dense = r.add(dense_with_messages(1, {0.5, 0.85}));
  r.add(topk_with_messages(1, {0.5, 0.84}));
  // Recorded before the fact: no run recorded perplexity, so accuracy, higher is better.
  CHECK(choose_test_metric(*r.db, load_experiment_runs(*r.db, std::string("answer")).finished) ==
        ResolvedMetric{"test_accuracy", true});
  ResolvedRun resolved;
  resolved.test_metric = {"test_loss", false};  // whatever the engine resolved, the report follows
  r.recorder->record_fact(dense, ResolvedRun::kFact, resolved.to_json());
  CHECK(choose_test_metric(*r.db, load_experiment_runs(*r.db, std::string("answer")).finished) ==
        ResolvedMetric{"test_loss", false});
  const TestMetric metric = test_metric_of({"test_loss", false});
  CHECK(metric.label == "test loss");
  CHECK(metric.better(0.3, 0.4));
}

TEST_CASE("a configuration that ran out of steps below the target shows where its curve was heading, as advise "
          "ranks it", "[reports][answer]") {
  Recorded r("answer-extrapolated");
  r.add(dense_with_messages(1, {0.5, 0.6, 0.7, 0.8, 0.85, 0.86}));
  // Still improving when its runs ended, below the target 0.855.
  r.add(topk_with_messages(1, {0.3, 0.5, 0.6, 0.68, 0.73, 0.77}));
  const std::string md = r.markdown({.gnuplot = kNoFigures});
  INFO(md);
  const auto model = build_model(*r.db, {"answer"}, {});
  const ConfigSummary* topk = nullptr;
  for (const ConfigSummary& s : model->summaries)
    if (s.config->label == "topk ratio=0.01") topk = &s;
  REQUIRE(topk != nullptr);
  const AnswerLink own = model->answer->own_link(*topk);
  const CurveTime t = curve_time(*model->answer, *topk, model->answer->step(*topk, own));
  REQUIRE(t.why_not.empty());
  CHECK(t.low <= t.seconds);
  CHECK(t.seconds <= t.high);
  // The report's answer words the same extrapolation the advice ranks on.
  std::string shown = curve_time_text(t);  // as report.md escapes it
  for (std::size_t at = shown.find_first_of("[]"); at != std::string::npos; at = shown.find_first_of("[]", at + 2))
    shown.insert(at, "\\");
  CHECK_THAT(md, Catch::Contains("topk ratio=0.01 not reached (0 of 1 runs), " + shown));
  // And where it stood when its runs ended, against the baseline at the same projected time:
  // topk's last evaluation (0.77 at step 12) against none's curve at as many seconds.
  CHECK_THAT(md, Catch::Contains("(80% of the fit), and at ") &&
                     Catch::Contains(" s, its runs' end, test accuracy 0.7700 against none's "));
  CHECK_THAT(curve_time_text(t), Catch::StartsWith("extrapolated from its learning curve: ") &&
                                     Catch::EndsWith(" (80% of the fit)"));
}
