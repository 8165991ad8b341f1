// The advice (reports/advice.hpp) is the answer's numbers on the asked link, ranked: a candidate
// whose probe reached the target has the answer's time to it and its step with the row's shared
// compute (where every probe computed alike, the figures the report's "Projected onto other links"
// gives), one that did not is extrapolated from its curve, and one whose curve cannot say is
// dropped with the reason.
#include <catch2/catch.hpp>

#include "advise/advice.hpp"
#include "advise/advice_check.hpp"
#include "advise/layer_check.hpp"
#include "reports/report_model.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::advise;
using namespace laconic::reports::testing;

TEST_CASE("advice ranks the answer's times on the link, extrapolates the rest and drops what cannot be said",
          "[reports][advise]") {
  TempDir dir("advice");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("adv", "adv.lua", "cafe");
  // Dense reaches its own target (0.85 - 0.5 points) at its last epoch; Top-k 1% reaches it one
  // epoch earlier with 100x fewer bytes; Top-k 10% never does and its curve is flat.
  RunSpec dense = dense_with_messages(1, {0.5, 0.7, 0.8, 0.85});
  record_run(*db, recorder, e, "adv", dense);
  RunSpec fast = topk_with_messages(1, {0.6, 0.8, 0.85, 0.86});
  record_run(*db, recorder, e, "adv", fast);
  RunSpec flat = topk_with_messages(1, {0.6, 0.6, 0.6, 0.6});
  flat.name = "compressor=topk,ratio=0.1,seed=1";
  flat.swept["compressor.ratio"] = Value{0.1};
  flat.compressor_fields = {{"ratio", Value{0.1}}};
  record_run(*db, recorder, e, "adv", flat);

  const auto model = build_model(*db, {"adv"});
  const LinkSpec link = parse_link("100Mbit,1ms");
  const Advice advice = advice_of(*model, link);
  REQUIRE(advice.ranked.size() == 2);
  CHECK(advice.ranked[0].candidate == "topk ratio=0.01");
  CHECK(advice.ranked[1].baseline);
  for (const AdviceRow& row : advice.ranked) {
    INFO(row.candidate);
    CHECK(row.basis == StepsBasis::Probe);
    const AnswerLink shared{link.text, link, false, nullptr, true};
    const TimeToTarget t = model->answer->time_to_target(*row.summary, shared);
    CHECK(row.seconds == t.seconds);  // one figure: the answer's
    CHECK(row.step == model->answer->step(*row.summary, shared));
    CHECK(row.step == Approx(step_on_link(*row.summary, link)));  // every probe computed 35 ms a step
  }
  CHECK(advice.ranked[0].crossover > 1e8);  // faster than dense up to beyond the link's own rate
  CHECK(advice.probe_noise.empty());        // every probe computed 35 ms a step
  REQUIRE(advice.dropped.size() == 1);
  CHECK_THAT(advice.dropped[0].dropped,
             Catch::Contains("not reached within its probe") && Catch::Contains("not improving"));
  const Table table = advice_table(advice);
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0][0] == "1");
  CHECK(table.rows[2][0] == "-");
  // The dropped row's reason stands below the table, not in its time column.
  CHECK(table.rows[2][4] == "dropped (why: below the table)");
  CHECK_THAT(dropped_text(advice), Catch::StartsWith("Dropped: ") && Catch::Contains(advice.dropped[0].candidate +
                                                                                    ": not reached within its probe"));
  CHECK(table.csv.rows[0][4] == "probe");
}

TEST_CASE("the advice checked against full runs: measured steps and times beside the predicted, ranks and regret",
          "[reports][advise]") {
  TempDir dir("advice-check");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto probes = recorder.add_experiment("probes", "adv.lua", "cafe");
  // Two seeds each (the target 0.85): dense's both reach it at the fourth evaluation (8 steps), so
  // its interval is its point; Top-k's at the third and the fourth (6 and 8 steps).
  record_run(*db, recorder, probes, "probes", dense_with_messages(1, {0.5, 0.7, 0.8, 0.85}));
  record_run(*db, recorder, probes, "probes", dense_with_messages(2, {0.5, 0.7, 0.81, 0.86}));
  record_run(*db, recorder, probes, "probes", topk_with_messages(1, {0.6, 0.8, 0.85, 0.86}));
  record_run(*db, recorder, probes, "probes", topk_with_messages(2, {0.6, 0.75, 0.84, 0.86}));
  // The full runs: the same candidates; dense's communication measured at 50 ms a step, Top-k's at 5.
  const auto full = recorder.add_experiment("full", "adv.lua", "cafe");
  RunSpec dense_full = dense_with_messages(1, {0.6, 0.8, 0.85, 0.86});
  dense_full.communicate = 0.05;
  record_run(*db, recorder, full, "full", dense_full);
  RunSpec topk_full = topk_with_messages(1, {0.6, 0.7, 0.85, 0.86});
  topk_full.communicate = 0.005;
  record_run(*db, recorder, full, "full", topk_full);

  const auto advised = build_model(*db, {"probes"});
  const Advice advice = advice_of(*advised, parse_link("100Mbit,1ms"));
  TargetRule rule;
  rule.value = advice.target;
  const AdviceCheck check = check_advice(advice, *build_model(*db, {"full"}, rule));
  REQUIRE(check.rows.size() == 2);
  const CheckRow& topk = check.rows[0];
  CHECK(topk.candidate == "topk ratio=0.01");
  CHECK(topk.predicted_rank == 1);
  // Measured: 0.01 + 0.02 + 0.005 compute, 0.004 compress, 0.005 communicate = 0.044 s a step;
  // the target (0.845) first reached at the third epoch's evaluation, after 6 steps (2 an epoch).
  CHECK(topk.measured_step == Approx(0.044));
  CHECK(topk.measured_time == Approx(6 * 0.044));
  const CheckRow& dense = check.rows[1];
  CHECK(dense.measured_step == Approx(0.085));
  CHECK(dense.measured_time == Approx(6 * 0.085));  // also at the third epoch's evaluation
  CHECK(topk.measured_rank == 1);
  CHECK(check.best == "topk ratio=0.01");
  CHECK(check.regret == Approx(0));
  CHECK(check.baseline_regret == Approx(0.085 / 0.044 - 1));
  CHECK(check.median_step_error >= 0);
  CHECK(check_table(check).rows.size() == 2);
  // Whether the measured time lies within the advice's interval: Top-k's (6 and 8 steps, Student's
  // t for two seeds) is wide and holds its 6 x 44 ms; dense's is one point, 8 of its probes'
  // steps, and the full run took 6 others.
  CHECK(advice.target == Approx(0.85));
  REQUIRE(topk.within.has_value());
  CHECK(topk.predicted_low < topk.predicted_high);
  CHECK(*topk.within);
  REQUIRE(dense.within.has_value());
  CHECK(dense.predicted_low == Approx(dense.predicted_high));
  CHECK_FALSE(*dense.within);
  CHECK(check.with_interval == 2);
  CHECK(check.within == 1);
  CHECK(check_table(check).rows[1][10] == "no");

  // Two seeds of full runs are measured as the advice predicts: each run's steps to the target x
  // its step, the geometric mean over the runs. Dense's first seed reaches 0.85 after 4 steps, its
  // second after 8; their mean curve (0.78, 0.82, 0.86) only after 8.
  const auto two_seeds = recorder.add_experiment("full2", "adv.lua", "cafe");
  for (const auto& [seed, curve] : {std::pair{1, std::vector<double>{0.6, 0.86, 0.8, 0.86}},
                                    std::pair{2, std::vector<double>{0.6, 0.7, 0.84, 0.86}}}) {
    RunSpec run = dense_with_messages(seed, curve);
    run.communicate = 0.05;
    record_run(*db, recorder, two_seeds, "full2", run);
  }
  const AdviceCheck two = check_advice(advice, *build_model(*db, {"full2"}, rule));
  REQUIRE(two.rows.size() == 1);
  CHECK(two.rows[0].measured_step == Approx(0.085));
  CHECK(two.rows[0].measured_time == Approx(std::sqrt(4.0 * 8.0) * 0.085));
}

TEST_CASE("with a hardware profile the advice's steps are the profile's, for every run of a candidate",
          "[reports][advise]") {
  TempDir dir("advice-hardware");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("adv", "adv.lua", "cafe");
  record_run(*db, recorder, e, "adv", dense_with_messages(1, {0.5, 0.7, 0.8, 0.85}));
  record_run(*db, recorder, e, "adv", topk_with_messages(1, {0.6, 0.8, 0.85, 0.86}));
  const auto model = build_model(*db, {"adv"});
  const RunData& any = model->compared.front();
  const HardwareProfile gpu =
      hardware_profile_from_json(nlohmann::json{{"laconic_hardware_profile", 1},
                                                {"name", "Example GPU"},
                                                {"models",
                                                 {{{"model", any.run.model},
                                                   {"batch_size", any.run.batch_size},
                                                   {"parameters", static_cast<std::int64_t>(any.model_parameters)},
                                                   {"forward", 0.001},
                                                   {"backward", 0.002}}}},
                                                {"compressors", {{"topk", {{"compress", {{"per_call", 1e-4}}}}}}}},
                                 "gpu.json");
  const LinkSpec link = parse_link("100Mbit,1ms");
  const Advice advice = advice_of(*model, link, &gpu);
  REQUIRE(advice.ranked.size() == 2);
  for (const AdviceRow& row : advice.ranked) {
    INFO(row.candidate);
    CHECK(row.step == Approx(hardware_step(*row.summary->config->runs.front(), gpu, link).total()));
    CHECK(row.seconds == model->answer->time_to_target(*row.summary, {link.text, link, false, &gpu}).seconds);
  }
  CHECK_THAT(advice_table(advice).columns[2].header, Catch::Contains("Example GPU"));
}

TEST_CASE("the layer plan checked against full runs with scope = layer: each split's figures beside the measured",
          "[reports][advise]") {
  TempDir dir("advice-layers");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto probes = recorder.add_experiment("probes", "adv.lua", "cafe");
  record_run(*db, recorder, probes, "probes", dense_with_messages(1, {0.5, 0.7, 0.8, 0.85}));
  const auto topk_probe = record_run(*db, recorder, probes, "probes", topk_with_messages(1, {0.6, 0.8, 0.85, 0.86}));
  // Two layers, gathered: the small one's codec costs more than its bytes on 100 Mbit/s.
  LayerCodecCosts costs;
  costs.layers = {{10, 16, 50e-6, 5e-6, 1e-6, 1e-6}, {100000, 8000, 1e-3, 1e-4, 2e-5, 2e-5}};
  recorder.record_fact(topk_probe, LayerCodecCosts::kFact, costs.to_json_text());
  // Full runs of the same Top-k with scope = "layer" at two splits, and one of another ratio.
  const auto full = recorder.add_experiment("full", "adv.lua", "cafe");
  const auto split_run = [&](std::int64_t min_size, double ratio, double compress, double communicate,
                             std::int64_t seed = 1) {
    RunSpec spec = topk_with_messages(seed, {0.6, 0.7, 0.85, 0.86});
    spec.name = str_cat("compressor=topk,ratio=", ratio, ",min_size=", min_size, ",seed=", seed);
    spec.swept["compressor.min_size"] = Value{min_size};
    spec.swept["compressor.ratio"] = Value{ratio};
    spec.compressor_fields = {
        {"ratio", Value{ratio}}, {"scope", Value{std::string("layer")}}, {"min_size", Value{min_size}}};
    spec.compress = compress;
    spec.decompress = 0.0002;
    spec.communicate = communicate;
    spec.link_bytes = 8100;
    record_run(*db, recorder, full, "full", spec);
  };
  split_run(0, 0.01, 0.0012, 0.001);
  split_run(11, 0.01, 0.0011, 0.0009);
  split_run(11, 0.1, 0.0011, 0.0001);  // another candidate: not matched
  record_run(*db, recorder, full, "full", topk_with_messages(1, {0.6, 0.7, 0.85, 0.86}));  // global: not matched
  const auto advised = build_model(*db, {"probes"});
  const Advice advice = advice_of(*advised, parse_link("100Mbit,1ms"));
  const std::vector<AdviceLayers> layers = advice_layers(advice);
  REQUIRE(layers.size() == 1);
  REQUIRE(layers[0].plan.min_size == 11);
  const std::vector<LayerCheckRow> rows = check_layers(layers, *build_model(*db, {"full"}));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].candidate == "topk ratio=0.01");
  CHECK(rows[0].predicted.min_size == 0);
  CHECK_FALSE(rows[0].chosen);
  CHECK(rows[1].chosen);
  for (const LayerCheckRow& r : rows) {
    const LayerSplit by_plan = split_at(layers[0].plan, r.predicted.min_size);
    CHECK(r.predicted.seconds == by_plan.seconds);
    CHECK(r.predicted.link_bytes == by_plan.link_bytes);
    CHECK(r.measured_link_bytes == Approx(8100));
  }
  // Measured: compress + decompress, and that plus the communication, per step and worker.
  CHECK(rows[0].measured_codec == Approx(0.0014));
  CHECK(rows[0].measured_exchange.mean == Approx(0.0024));
  CHECK(rows[0].measured_exchange.n == 1);
  CHECK(rows[1].measured_exchange.mean == Approx(0.0022));
  CHECK(layer_check_table(rows).rows.size() == 2);
  CHECK_THAT(layer_check_text(rows),
             Catch::Contains(
                 "topk ratio=0.01: the cheapest exchange measured at min_size = 11 (2200.0 us), the plan's choice"));
  // Two seeds each, the plan's split measured slower by less than the noise: said so.
  const auto noisy = recorder.add_experiment("noisy", "adv.lua", "cafe");
  const auto noisy_run = [&](std::int64_t min_size, double communicate, std::int64_t seed) {
    RunSpec spec = topk_with_messages(seed, {0.6, 0.7, 0.85, 0.86});
    spec.name = str_cat("compressor=topk,ratio=0.01,min_size=", min_size, ",seed=", seed);
    spec.swept["compressor.min_size"] = Value{min_size};
    spec.compressor_fields = {
        {"ratio", Value{0.01}}, {"scope", Value{std::string("layer")}}, {"min_size", Value{min_size}}};
    spec.communicate = communicate;
    record_run(*db, recorder, noisy, "noisy", spec);
  };
  noisy_run(0, 0.0005, 1);
  noisy_run(0, 0.0009, 2);
  noisy_run(11, 0.0009, 1);
  noisy_run(11, 0.0010, 2);
  const std::vector<LayerCheckRow> two = check_layers(layers, *build_model(*db, {"noisy"}));
  REQUIRE(two.size() == 2);
  CHECK(two[0].measured_exchange.n == 2);
  CHECK(two[0].measured_exchange.mean == Approx(0.004 + 0.0007));
  CHECK_THAT(layer_check_text(two), Catch::Contains("the cheapest exchange measured at min_size = 0") &&
                                        Catch::Contains("the plan chose min_size = 11") &&
                                        Catch::Contains("us more, 95% interval of the difference ± ") &&
                                        Catch::Contains("within the noise"));
}

TEST_CASE("probes the answer finds disturbed (compute unlike the baseline's) are said to carry the noise",
          "[reports][advise]") {
  TempDir dir("advice-noise");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("adv", "adv.lua", "cafe");
  record_run(*db, recorder, e, "adv", dense_with_messages(1, {0.5, 0.7, 0.8, 0.85}));
  RunSpec slow = topk_with_messages(1, {0.6, 0.8, 0.85, 0.86});
  slow.forward = 0.02;  // 45 ms of compute a step against dense's 35: 29% apart
  const auto slow_id = record_run(*db, recorder, e, "adv", slow);
  recorder.record_fact(slow_id, "advice", R"({"version": 1, "link": "100Mbit,1ms"})");  // as laconic advise records it
  const auto model = build_model(*db, {"adv"});
  const Advice advice = advice_of(*model, parse_link("100Mbit,1ms"));
  REQUIRE(advice.ranked.size() == 2);
  CHECK_THAT(advice.probe_noise,
             Catch::Contains("topk ratio=0.01: compute +29% against the baseline, which no compressor changes") &&
                 Catch::Contains("compute as its mean over every probe (40 ms") &&
                 Catch::Contains("more seeds (--seeds 5) average"));
  // Compute is the same work for both, so each step takes their mean (40 ms), not its own: Top-k's
  // 5 ms shorter than its probe's, dense's 5 ms longer, and the times to the target with them.
  const LinkSpec link = parse_link("100Mbit,1ms");
  const Answer& answer = *model->answer;
  for (const AdviceRow& row : advice.ranked) {
    INFO(row.candidate);
    CHECK(answer.shared_compute(*row.summary) == Approx(0.040));
    CHECK(row.step == Approx(step_on_link(*row.summary, link) - row.summary->compute.mean + 0.040));
    const TimeToTarget own = answer.time_to_target(*row.summary, {link.text, link});
    CHECK(row.seconds == Approx(own.seconds * row.step / step_on_link(*row.summary, link)));
  }
  // The report's section "Advice" says the same, after the first two, and then that the link
  // (100Mbit,1ms: no overhead) projects the wire alone.
  const auto section = advice_section(*model, nullptr);
  REQUIRE(section.has_value());
  CHECK_THAT(advice.host_costs, Catch::Contains("--link BANDWIDTH,LATENCY,OVERHEAD[,HOST_BANDWIDTH]"));
  CHECK_THAT(section->lead,
             Catch::EndsWith(advice.first_two + ". " + advice.probe_noise + ". " + advice.host_costs + "."));
  // A link with the hosts' cost per message says nothing of it.
  CHECK(advice_of(*model, parse_link("100Mbit,1ms,300us")).host_costs.empty());
}

TEST_CASE("the break-even compares the times the ranking compares: first at the link's rate is faster there",
          "[reports][advise]") {
  TempDir dir("advice-crossover");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("adv", "adv.lua", "cafe");
  // Dense: both seeds reach the target (0.855) after 6 steps. Top-k: one after 2, one after 8,
  // whose geometric mean (4, the answer's time) is below dense's 6 x its step ratio, and whose
  // arithmetic mean (5) is not: on 100 Gbit/s with 3 ms a message Top-k's step (4 messages and its
  // codec) is 1.24x dense's (2 messages), so it ranks first by 4 x 1.24 < 6.
  record_run(*db, recorder, e, "adv", dense_with_messages(1, {0.5, 0.6, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", dense_with_messages(2, {0.5, 0.6, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", topk_with_messages(1, {0.86, 0.86, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", topk_with_messages(2, {0.5, 0.6, 0.7, 0.86}));
  const auto model = build_model(*db, {"adv"});
  const Advice advice = advice_of(*model, parse_link("100Gbit,3ms"));
  REQUIRE(advice.ranked.size() == 2);
  const AdviceRow& topk = advice.ranked[0];
  CHECK(topk.candidate == "topk ratio=0.01");
  CHECK(topk.steps == Approx(5));  // the arithmetic mean, which the ranking does not use
  CHECK(topk.seconds == Approx(4 * topk.step));
  // Ranked ahead of dense on this link, so faster than it up to its rate, the top of the scan.
  CHECK(topk.crossover == Approx(1e11));
}

TEST_CASE("a time to the target from some of a candidate's seeds says how many reached it", "[reports][advise]") {
  TempDir dir("advice-some-seeds");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("adv", "adv.lua", "cafe");
  record_run(*db, recorder, e, "adv", dense_with_messages(1, {0.5, 0.6, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", dense_with_messages(2, {0.5, 0.6, 0.86, 0.86}));
  // Top-k: two of three seeds reach the target (0.855), the third never does.
  record_run(*db, recorder, e, "adv", topk_with_messages(1, {0.6, 0.86, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", topk_with_messages(2, {0.6, 0.7, 0.86, 0.86}));
  record_run(*db, recorder, e, "adv", topk_with_messages(3, {0.6, 0.7, 0.8, 0.84}));
  const auto model = build_model(*db, {"adv"});
  const Table table = advice_table(advice_of(*model, parse_link("100Mbit,1ms")));
  std::string topk, dense;
  for (const auto& row : table.rows) (row[1] == "none" ? dense : topk) = row[4];
  CHECK_THAT(topk, Catch::Contains("(95% over the 2 of 3 seeds that reached it)"));
  CHECK_THAT(dense, Catch::EndsWith("(95% over seeds)"));
}
