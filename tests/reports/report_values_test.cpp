// Exact values of the report's sections against hand computation (tests/reports/fixture.hpp
// writes every per-step value the same for every step and worker).
#include <catch2/catch.hpp>

#include "reports/report.hpp"
#include "reports/report_model.hpp"
#include "storage/queries.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {

// none: seeds reach 0.75 and 0.8; topk 1%: 0.7 and 0.72, its second seed with a parameter server
// whose huge rows must stay out of every worker figure, and twice the epoch time.
std::unique_ptr<storage::Database> values_database(const TempDir& dir) {
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("values", "values.lua", "cafe");
  record_run(*db, recorder, e, "values", dense(1, {0.5, 0.75}));
  record_run(*db, recorder, e, "values", dense(2, {0.6, 0.8}));
  record_run(*db, recorder, e, "values", topk(1, {0.4, 0.7}));
  RunSpec with_server = topk(2, {0.45, 0.72});
  with_server.servers = 1;
  with_server.epoch_time = {20, 24};
  record_run(*db, recorder, e, "values", with_server);
  return db;
}

}  // namespace

TEST_CASE("the final table shows mean ± sample std over seeds per model x workers and compressor",
          "[reports][values]") {
  TempDir dir("values-final");
  auto db = values_database(dir);
  const auto paths =
      write_report(*db, "values", dir.file("out"), {.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}});
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK(has_line(md, "| configuration | none | topk ratio=0.01 |"));
  // std of {0.75, 0.8} = 0.025 * sqrt(2) = 0.03536; of {0.7, 0.72} = 0.01414.
  CHECK(has_line(md, "| model=lenet5, workers=2 | 0.7750 ± 0.0354 (n=2) | 0.7100 ± 0.0141 (n=2) |"));
  CHECK(has_line(md, "- test metric: test_accuracy (higher is better)"));
  CHECK(has_line(md, "- compared: 4 FINISHED runs in 2 configurations"));

  const std::string csv = read_text(dir.file("out/tables/final_metric.csv"));
  CHECK(csv ==
        "row,column,mean,std,n\r\n"
        "\"model=lenet5, workers=2\",none,0.775,0.03535533906,2\r\n"
        "\"model=lenet5, workers=2\",topk ratio=0.01,0.71,0.01414213562,2\r\n");
}

TEST_CASE("compression ratio and step times count worker ranks only, never the parameter server", "[reports][values]") {
  TempDir dir("values-compression");
  auto db = values_database(dir);
  const auto paths =
      write_report(*db, "values", dir.file("out"), {.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}});
  const std::string md = read_text(paths.markdown);
  INFO(md);
  // 8 worker-steps x 250000 dense bytes / (8 x 2500 sent) = 100, for both seeds.
  CHECK(has_line(md, "| none | 1.0x | 0.7750 ± 0.0354 (n=2) |"));
  CHECK(has_line(md, "| topk ratio=0.01 | 100.0x | 0.7100 ± 0.0141 (n=2) |"));
  // compute 0.01 + 0.02 + 0.005; compress 0.003 + 0.001; no wait recorded; projected step
  // 0.035 + 0.004 + 0.002. Every step takes the same time: IQR of one point, a 95% interval of 0.
  CHECK(has_line(md,
                 "| none | 0.035 | 0 | - | 0.005 | 0.002 | 0.04 | 0.037 | 95% | 0.04 \\[0.04, 0.04\\] | 0.04 ± 0 (95%, n=2) "
                 "| baseline |"));
  CHECK(has_line(md,
                 "| topk ratio=0.01 | 0.035 | 0.004 | - | 0.005 | 0.002 | 0.044 | 0.041 | 85% | 0.044 \\[0.044, 0.044\\] | "
                 "0.044 ± 0 (95%, n=2) | +10.0% |"));
  // 8 x 2500 payload bytes / 8 worker-steps = 2500 per step; 8 * 2500 / 62500 parameters = 0.32.
  CHECK(has_line(md, "| topk ratio=0.01 | 62500 | 1 | 0.320 |"));
  // The Runs table's totals are over all ranks, the server's 4 rounds of 1e9 bytes included.
  CHECK(has_line(md, "| compressor=topk,ratio=0.01,seed=2 | FINISHED | 0.7200 | 4.00 GB | 4.00 GB | 1.0x | 60.0 |  |"));
}

TEST_CASE("step times: waiting apart, a difference within the noise said so, disturbed compute flagged",
          "[reports][values]") {
  TempDir dir("values-noise");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("noise", "noise.lua", "cafe");
  record_run(*db, recorder, e, "noise", dense(1, {0.5, 0.75}));
  // Same step time as dense: a difference of nothing, within the noise.
  RunSpec same = dense(1, {0.5, 0.7});
  same.name = "compressor=fp16,seed=1";
  same.swept = {{"compressor", Value{std::string("fp16")}}};
  same.compressor = "fp16";
  record_run(*db, recorder, e, "noise", same);
  // Forward twice as slow: compute 0.045 against 0.035, which no compressor explains.
  RunSpec slow = topk(1, {0.4, 0.7});
  slow.forward = 0.02;
  slow.compress = slow.decompress = 0;
  record_run(*db, recorder, e, "noise", slow);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "noise", dir.file("out"), options).markdown);
  INFO(md);
  CHECK(has_line(md,
                 "| fp16 | 0.035 | 0 | - | 0.005 | 0.002 | 0.04 | 0.037 | 95% | 0.04 \\[0.04, 0.04\\] | 0.04 (n=1) | "
                 "+0.0% (noise) |"));
  CHECK(has_line(md,
                 "| topk ratio=0.01 | 0.045 | 0 | - | 0.005 | 0.002 | 0.05 | 0.047 | 96% | 0.05 \\[0.05, 0.05\\] | "
                 "0.05 (n=1) | +25.0% disturbed |"));
  CHECK_THAT(md, Catch::Contains("Disturbed by the machine: compute (forward + backward + optimizer, which no "
                                 "compressor changes) differs by more than 10% from the same row's baseline in "
                                 "topk ratio=0.01 (compute +29%)"));
}

TEST_CASE("step times name the configurations whose wait came through estimated clock offsets, with the error",
          "[reports][values]") {
  TempDir dir("values-stamps");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("stamps", "stamps.lua", "cafe");
  // Dense on one host (the arrival board); Top-k across hosts, its seeds with different errors.
  const auto board = record_run(*db, recorder, e, "stamps", dense(1, {0.5, 0.75}));
  recorder.record_fact(board, "wait_measured", "arrival_board");
  for (std::int64_t seed : {1, 2}) {
    const auto run = record_run(*db, recorder, e, "stamps", topk(seed, {0.4, 0.7}));
    recorder.record_fact(run, "wait_measured", "message_stamps");
    recorder.record_fact(run, "clock_offset_error", seed == 1 ? "4.4e-05" : "0.00021");
  }
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "stamps", dir.file("out"), options).markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("Wait measured on rank 0's clock through estimated clock offsets (ranks on several "
                                 "hosts, or LACONIC_ARRIVALS=stamps): topk ratio=0.01 (clock offsets within 0.00021 "
                                 "s); a wait there is off by "
                                 "at most twice that"));
  CHECK_THAT(md, !Catch::Contains("none (clock offsets"));
}

TEST_CASE("step times of overlapped runs show what was hidden behind backward, outside the step's sum",
          "[reports][values][overlap]") {
  TempDir dir("values-overlap");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("overlap", "overlap.lua", "cafe");
  record_run(*db, recorder, e, "overlap", dense(1, {0.5, 0.75}));
  RunSpec overlapped = dense(1, {0.5, 0.75});
  overlapped.name = "compressor=fp16,seed=1";
  overlapped.swept = {{"compressor", Value{std::string("fp16")}}};
  overlapped.compressor = "fp16";
  overlapped.communicate = 0.001;  // of 0.005: 0.004 ran during backward
  overlapped.overlapped = 0.004;
  record_run(*db, recorder, e, "overlap", overlapped);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "overlap", dir.file("out"), options).markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| configuration | compute (s) | compress (s) | wait (s) | communicate, measured (s) "
                                 "| hidden behind backward (s) | communicate, projected (s) |"));
  CHECK(has_line(md,
                 "| none | 0.035 | 0 | - | 0.005 | - | 0.002 | 0.04 | 0.037 | 95% | 0.04 \\[0.04, 0.04\\] | 0.04 (n=1) | "
                 "baseline |"));
  // The step is compute + communicate after backward: 0.036; the hidden 0.004 is not in it.
  CHECK(has_line(md,
                 "| fp16 | 0.035 | 0 | - | 0.001 | 0.004 | 0.002 | 0.036 | 0.037 | 95% | 0.036 \\[0.036, 0.036\\] | "
                 "0.036 (n=1) | -10.0% |"));
  const std::string csv = read_text(dir.file("out/tables/step_time.csv"));
  CHECK_THAT(csv, Catch::StartsWith("configuration,compute_s,compress_s,wait_s,communicate_measured_s,"
                                    "hidden_behind_backward_s,communicate_projected_s,"));
}

TEST_CASE("--link projects every configuration's recorded messages onto links the runs never used",
          "[reports][values][links]") {
  TempDir dir("values-links");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("links", "links.lua", "cafe");
  record_run(*db, recorder, e, "links", dense_with_messages(1, {0.5, 0.75}));
  record_run(*db, recorder, e, "links", topk_with_messages(1, {0.4, 0.7}));
  RunSpec old = dense(1, {0.5, 0.7});  // recorded by a laconic that stored no messages
  old.name = "compressor=fp16,seed=1";
  old.swept = {{"compressor", Value{std::string("fp16")}}};
  old.compressor = "fp16";
  record_run(*db, recorder, e, "links", old);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  options.links = {parse_link("10Mbit"), parse_link("1Gbit,1ms")};
  const std::string md = read_text(write_report(*db, "links", dir.file("out"), options).markdown);
  INFO(md);
  CHECK(has_line(md, "## Projected onto other links"));
  CHECK(has_line(md,
                 "| configuration | step on 10Mbit, 50 us (s) | to target vs baseline on 10Mbit, 50 us | step on "
                 "1Gbit,1ms (s) | to target vs baseline on 1Gbit,1ms |"));
  // Payload moves at 0.936 of the rate (TCP over Ethernet, kTcpPayloadFraction). dense: compute 0.035; on
  // 10 Mbit/s 2 x 50 us + 1 Mbit / 9.36 Mbit/s = 0.10694 s; on 1 Gbit/s with 1 ms per message 2 x 1 ms +
  // 1.0684 ms = 0.0030684 s.
  CHECK(has_line(md, "| none | 0.142 | baseline | 0.0381 | baseline |"));
  // topk: compute 0.035 + compress 0.004; 4 x 50 us + 1.0684 ms = 0.0012684 s, 4 x 1 ms + 10.7 us.
  // Both reach the target at step 4: the times differ as the steps do, -71.6% and +13.0%; one
  // seed of each gives no interval, so no verdict.
  CHECK(has_line(md,
                 "| topk ratio=0.01 | 0.0403 | inconclusive (-72%; one run of topk ratio=0.01: no interval) | 0.043 | "
                 "inconclusive (+13%; one run of topk ratio=0.01: no interval) |"));
  CHECK(has_line(md, "| fp16 | - | - | - | - |"));
  CHECK_THAT(md, Catch::Contains("the runs did not record their messages"));
  const std::string csv = read_text(dir.file("out/tables/other_links.csv"));
  CHECK_THAT(csv, Catch::StartsWith("configuration,\"step_s@10Mbit, 50 us\",\"versus_baseline@10Mbit, 50 us\","
                                    "\"step_s@1Gbit,1ms\",\"versus_baseline@1Gbit,1ms\"\r\n"));
}

TEST_CASE("a --link without a latency is projected at the runs' latency, and every sentence that names it says so",
          "[reports][values][links]") {
  TempDir dir("values-link-latency");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("latency", "latency.lua", "cafe");
  RunSpec base = dense_with_messages(1, {0.5, 0.75}), sparse = topk_with_messages(1, {0.4, 0.7});
  base.latency = sparse.latency = "1ms";
  record_run(*db, recorder, e, "latency", base);
  record_run(*db, recorder, e, "latency", sparse);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  options.links = {parse_link("10Gbit"), parse_link("10Gbit,50us")};
  const std::string md = read_text(write_report(*db, "latency", dir.file("out"), options).markdown);
  INFO(md);
  // The bandwidth alone takes the runs' 1 ms; the one given with its latency keeps it.
  CHECK_THAT(md, Catch::Contains("On 10Gbit, 1 ms (projected), ") && Catch::Contains("On 10Gbit,50us (projected), "));
  CHECK_THAT(md, Catch::Contains("projected at 1 ms latency (the runs' own); --link BANDWIDTH,LATENCY gives another"));
  CHECK_THAT(md, !Catch::Contains("On 10Gbit (projected)"));
  // dense on 10 Gbit/s at 1 ms: 2 x 1 ms + 1 Mbit / 9.36 Gbit/s = 2.107 ms a step, + 0.035 compute.
  CHECK(has_line(md, "| none | 0.0371 | baseline | 0.0352 | baseline |"));
}

TEST_CASE("does it pay off: the bandwidths at which a compressor reaches the target sooner than dense",
          "[reports][values][links]") {
  TempDir dir("values-pays-off");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("pays", "pays.lua", "cafe");
  for (std::int64_t seed : {1, 2}) {  // two alike seeds: an interval of no width
    record_run(*db, recorder, e, "pays", dense_with_messages(seed, {0.5, 0.75}));
    record_run(*db, recorder, e, "pays", topk_with_messages(seed, {0.4, 0.7}));
  }
  RunSpec never = topk(2, {0.3, 0.4});  // another configuration that never reaches 0.7
  never.name = "compressor=topk,ratio=0.001,seed=2";
  never.swept = {{"compressor", Value{std::string("topk")}}, {"compressor.ratio", Value{0.001}}};
  never.messages = 4;
  never.link_bytes = 125;
  record_run(*db, recorder, e, "pays", never);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "pays", dir.file("out"), options).markdown);
  INFO(md);
  CHECK(has_line(md, "## Does it pay off?"));
  // Both reach 0.7 after the same steps, so time to target compares as the steps do: dense
  // 0.035 + 2 x 50 us + 1e6 / 0.936b against Top-k's 0.039 + 4 x 50 us + 1e4 / 0.936b: Top-k is faster
  // below 0.99e6 / (0.936 x 0.0041) = 2.58e8 bit/s; the last grid point under it is 10^8.4 = 251 Mbit/s.
  // Every step of both seeds took as long, so there is no noise to stand between them.
  CHECK_THAT(md, Catch::Contains("| topk ratio=0.01 |") &&
                     Catch::Contains("| faster up to 251 Mbit/s; slower from 316 Mbit/s |"));
  CHECK_THAT(md, Catch::Contains("| not reached (0 of 1 runs) |"));
  CHECK_THAT(md, Catch::Contains("| (baseline) |"));
  const std::string csv = read_text(dir.file("out/tables/pays_off.csv"));
  CHECK_THAT(csv, Catch::Contains("topk ratio=0.01,") &&
                      Catch::Contains(",faster up to 251 Mbit/s; slower from 316 Mbit/s,251188643.2,251188643.2\r\n"));
}

TEST_CASE("does it pay off: one seed gives the point estimates' crossing, and no verdict", "[reports][values][links]") {
  TempDir dir("values-pays-off-one");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("pays", "pays.lua", "cafe");
  record_run(*db, recorder, e, "pays", dense_with_messages(1, {0.5, 0.75}));
  record_run(*db, recorder, e, "pays", topk_with_messages(1, {0.4, 0.7}));
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "pays", dir.file("out"), options).markdown);
  INFO(md);
  // The same crossing as with two seeds (251 Mbit/s), named as what it is.
  const std::string csv = read_text(dir.file("out/tables/pays_off.csv"));
  CHECK_THAT(csv, Catch::Contains("topk ratio=0.01,4,") &&
                      Catch::Contains(",inconclusive at every bandwidth from 10 Mbit/s to 100 Gbit/s; point estimates: "
                                      "faster up to 251 Mbit/s,,251188643.2\r\n"));
}

TEST_CASE("does it pay off: a run on an emulated link is a measured point beside its projected curve",
          "[reports][values][links]") {
  TempDir dir("values-pays-off-emulated");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("pays", "pays.lua", "cafe");
  RunSpec none = dense_with_messages(1, {0.5, 0.75});
  none.emulated = "100Mbit";
  none.communicate = 0.012;  // measured on the shaped link
  record_run(*db, recorder, e, "pays", none);
  RunSpec sparse = topk_with_messages(1, {0.4, 0.7});  // trained on loopback: no point
  record_run(*db, recorder, e, "pays", sparse);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "pays", dir.file("out"), options).markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("| measured on its emulated link (s) |"));
  // Both reach 0.7 at their last evaluation, step 4. Dense measured there: 4 x (compute 0.035 +
  // communicate 0.012) = 0.188 s; projected onto 100 Mbit/s: 4 x (0.035 + 2 x 50 us + 1 Mbit / 93.6 Mbit/s)
  // = 0.1831 s.
  CHECK_THAT(md, Catch::Contains("| none | 4 | 0.183 s (one run: no interval) |") &&
                     Catch::Contains("| 0.188 on 100 Mbit/s |"));
  CHECK_THAT(md, Catch::Contains("| topk ratio=0.01 | 4 |"));
  const std::string csv = read_text(dir.file("out/tables/pays_off.csv"));
  CHECK_THAT(csv, Catch::Contains(",emulated_bandwidth_bit_s,measured_time_to_target_s\r\n"));
  CHECK_THAT(csv, Catch::Contains(",(baseline),,,100000000,0.188"));
}

TEST_CASE("does it pay off: the measured point of two seeds is the answer's time on their measured steps",
          "[reports][values][links]") {
  TempDir dir("values-pays-off-emulated-seeds");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("pays", "pays.lua", "cafe");
  // Seed 1 reaches 0.7 after 4 steps, seed 2 after 2; each step measured at 0.035 + 0.012 s.
  for (const auto& [seed, curve] :
       {std::pair{1, std::vector<double>{0.5, 0.75}}, std::pair{2, std::vector<double>{0.75, 0.8}}}) {
    RunSpec none = dense_with_messages(seed, curve);
    none.emulated = "100Mbit";
    none.communicate = 0.012;
    record_run(*db, recorder, e, "pays", none);
  }
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  write_report(*db, "pays", dir.file("out"), options);
  // The geometric mean of 4 x 0.047 and 2 x 0.047 (0.133 s), as the answer times every run; not
  // the mean steps x the mean step (0.141 s).
  const std::string csv = read_text(dir.file("out/tables/pays_off.csv"));
  INFO(csv);
  CHECK_THAT(csv, Catch::Contains(",100000000,0.1329"));
}

TEST_CASE("does it pay off: one figure per row, its curves named by compressor", "[reports][values][links]") {
  TempDir dir("values-pays-off-rows");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("pays", "pays.lua", "cafe");
  for (const std::string model : {"lenet5", "mlp"}) {
    RunSpec none = dense_with_messages(1, {0.5, 0.75});
    RunSpec sparse = topk_with_messages(1, {0.4, 0.7});
    for (RunSpec* spec : {&none, &sparse}) {
      spec->model = model;
      spec->name = "model=" + model + "," + spec->name;
      spec->swept["model"] = Value{model};
      record_run(*db, recorder, e, "pays", *spec);
    }
  }
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "pays", dir.file("out"), options).markdown);
  INFO(md);
  CHECK_THAT(md, Catch::Contains("Time to target against bandwidth: model=lenet5** (figures/pays_off_1.svg)"));
  CHECK_THAT(md, Catch::Contains("Time to target against bandwidth: model=mlp** (figures/pays_off_2.svg)"));
  const std::string script = read_text(dir.file("out/figures/pays_off_2.gp"));
  CHECK_THAT(script, Catch::Contains("title \"none\"") && Catch::Contains("title \"topk ratio=0.01\""));
  CHECK_THAT(script, !Catch::Contains("lenet5"));
}

TEST_CASE("time and bytes to target count up to the first evaluation that reaches it", "[reports][values]") {
  TempDir dir("values-target");
  auto db = values_database(dir);
  const ReportOptions no_figures{.target = std::nullopt, .gnuplot = {"/nonexistent/gnuplot", 5}};

  SECTION("a target every configuration reaches at epoch 1") {
    ReportOptions options = no_figures;
    options.target = 0.7;
    const auto paths = write_report(*db, "values", dir.file("out"), options);
    const std::string md = read_text(paths.markdown);
    INFO(md);
    CHECK(paths.target == 0.7);
    CHECK(has_line(md, "- target: test_accuracy \\>= 0.7000 (--target)"));
    // Best: 0.75 and 0.8. After 4 steps, in epoch 1. Measured: 10 + 12 s; projected: 4 steps x
    // 0.037 s; bytes: 8 worker-steps x 250000.
    CHECK(has_line(md,
                   "| none | 2/2 | 0.7750 ± 0.0354 (n=2) | 4 | 2 | 22 ± 0 (n=2) | 0.148 s \\[0.148, 0.148\\] on 1Gbit, "
                   "50us | 2.00 MB |"));
    // Best 0.7 and 0.72. Measured 22 and 44 s (std 11 * sqrt(2)); projected 4 x 0.041 s; bytes 8 x 2500.
    CHECK(has_line(md,
                   "| topk ratio=0.01 | 2/2 | 0.7100 ± 0.0141 (n=2) | 4 | 2 | 33 ± 15.6 (n=2) | 0.164 s \\[0.164, "
                   "0.164\\] on 1Gbit, 50us | 20.0 kB |"));
    CHECK(has_line(md, "4 of 4 runs reached it."));
  }
  SECTION("a target only one seed of one configuration reaches") {
    ReportOptions options = no_figures;
    options.target = 0.79;
    const std::string md = read_text(write_report(*db, "values", dir.file("out"), options).markdown);
    INFO(md);
    CHECK(
        has_line(md,
                 "| none | 1/2 | 0.7750 ± 0.0354 (n=2) | 4 | 2 | 22 (n=1) | 0.148 s (1 of 2 runs reached it) on 1Gbit, "
                 "50us | 2.00 MB |"));
    CHECK(has_line(md, "| topk ratio=0.01 | 0/2 | 0.7100 ± 0.0141 (n=2) | not reached | - | - | - | - |"));
    CHECK(has_line(md, "1 of 4 runs reached it."));
  }
  SECTION("a target no run reaches is said plainly, with the best that was reached") {
    ReportOptions options = no_figures;
    options.target = 0.9;
    const std::string md = read_text(write_report(*db, "values", dir.file("out"), options).markdown);
    INFO(md);
    CHECK_THAT(md, Catch::Contains("No run reached the target test accuracy \\>= 0.9000; the best mean reached was "
                                   "0.7750 (none)."));
  }
  SECTION("the default target is the best dense configuration's mean final metric less 0.5 points") {
    const auto paths = write_report(*db, "values", dir.file("out"), no_figures);
    CHECK(paths.target == Approx(0.77));
    CHECK(has_line(read_text(paths.markdown),
                   "- target: test_accuracy \\>= 0.7700 (none reached 0.7750 on average, less 0.5 points)"));
  }
}

TEST_CASE("with evaluations between epoch ends, time to target counts up to the step of the first that reaches it",
          "[reports][values]") {
  TempDir dir("values-eval-every");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("every", "every.lua", "cafe");
  const auto run = record_run(*db, recorder, e, "every", dense(1, {0.5, 0.75}));
  {
    // eval_every = 3: an evaluation after 3 steps (step index 2, in epoch 1), at 15 s.
    auto sink = recorder.metrics_sink(run);
    sink->record({"test_accuracy", 2, 1, 0, 15.0, 0.74});
  }
  // The epoch's own value is its end's, not the one in between.
  const auto epochs = storage::epochs_of(*db, run);
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[1].test_accuracy == 0.75);
  ReportOptions options{.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}};
  const std::string md = read_text(write_report(*db, "every", dir.file("out"), options).markdown);
  INFO(md);
  // 3 steps: projected 3 x 0.037 s, bytes 3 steps x 2 workers x 250000.
  CHECK(has_line(md,
                 "| none | 1/1 | 0.7500 (n=1) | 3 | 2 | 15 (n=1) | 0.111 s (one run: no interval) on 1Gbit, 50us | "
                 "1.50 MB |"));  // in epoch 2
}

TEST_CASE("a tuned experiment reports the chosen trial, the median trial and the best on all seeds",
          "[reports][values][tune]") {
  TempDir dir("values-tune");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("tuned", "tuned.lua", "beef");
  auto tuned = [](RunSpec spec, double lr, const char* phase) {
    spec.swept["optimizer.lr"] = Value{lr};
    spec.swept["tune"] = Value{std::string(phase)};
    spec.name += ",lr=" + std::to_string(lr) + ",tune=" + phase;
    return spec;
  };
  // Trials on seed 1: none does best with lr 0.1, topk with lr 0.01.
  const double lrs[] = {0.1, 0.03, 0.01};
  const double none_final[] = {0.8, 0.7, 0.6}, topk_final[] = {0.5, 0.65, 0.7};
  for (int i = 0; i < 3; ++i) {
    record_run(*db, recorder, e, "tuned", tuned(dense(1, {0.1, none_final[i]}), lrs[i], "trial"));
    record_run(*db, recorder, e, "tuned", tuned(topk(1, {0.1, topk_final[i]}), lrs[i], "trial"));
  }
  for (std::int64_t seed : {1, 2}) {
    record_run(*db, recorder, e, "tuned", tuned(dense(seed, {0.1, seed == 1 ? 0.8 : 0.82}), 0.1, "best"));
    record_run(*db, recorder, e, "tuned", tuned(topk(seed, {0.1, seed == 1 ? 0.7 : 0.74}), 0.01, "best"));
  }
  const auto paths =
      write_report(*db, "tuned", dir.file("out"), {.target = std::nullopt, .gnuplot = {"/nonexistent/gnuplot", 5}});
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK(has_line(md, "| configuration | chosen | trials | chosen trial | median trial | best on all seeds |"));
  CHECK(has_line(
      md, "| model=lenet5, workers=2 / none | optimizer.lr=0.1 | 3 | 0.8000 | 0.7000 | 0.8100 ± 0.0141 (n=2) |"));
  CHECK(has_line(md,
                 "| model=lenet5, workers=2 / topk ratio=0.01 | optimizer.lr=0.01 | 3 | 0.7000 | 0.6500 | "
                 "0.7200 ± 0.0283 (n=2) |"));
  // The comparison uses the tune=best runs, grouped without the tuned learning rate.
  CHECK(has_line(md, "| model=lenet5, workers=2 | 0.8100 ± 0.0141 (n=2) | 0.7200 ± 0.0283 (n=2) |"));
  CHECK(has_line(md, "- compared: 4 FINISHED runs in 2 configurations (tune=best runs)"));
}

TEST_CASE("a report of thread ranks heads its times derived and its communication projected", "[reports][values]") {
  TempDir dir("values-threads");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("threads", "threads.lua", "cafe");
  for (const RunSpec& spec : {dense(1, {0.5, 0.75}), topk(1, {0.4, 0.7})})
    recorder.record_fact(record_run(*db, recorder, e, "threads", spec), "rank_clock", "thread_cpu");
  const std::string md = read_text(
      write_report(*db, "threads", dir.file("out"), {.target = 0.7, .gnuplot = {"/nonexistent/gnuplot", 5}}).markdown);
  INFO(md);
  CHECK_THAT(
      md, Catch::Contains("| communicate, recorded: projected (s) | communicate, projected (s) | step, derived (s) |"));
  CHECK_THAT(md, Catch::Contains("| derived time (s) | projected time (s) |"));  // convergence
  CHECK_THAT(md, !Catch::Contains("measured time (s)") && !Catch::Contains("communicate, measured"));
}
