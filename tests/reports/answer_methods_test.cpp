// The facts of a step each configuration's method brings to the answer (reports/aggregate.hpp,
// reports/answer.hpp): DiLoCo's overlapped exchange projected onto a link less the compute it
// ran under, compute utilization held equal between the report, laconic runs and the CSV, and an
// optimizer that compresses (DeMo) judged as a method in its row against the baseline.
#include <catch2/catch.hpp>

#include "engine/core/resolved_run.hpp"
#include "reports/format.hpp"
#include "reports/report_model.hpp"
#include "tests/reports/fixture.hpp"
#include "tests/reports/recorded.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

TEST_CASE("an exchange that overlapped DiLoCo's inner steps counts on a link only where it outlasts their compute",
          "[reports][answer]") {
  // diloco { overlap }: time_overlap_budget 0.04 s on every 4th step is 0.01 s a step; the
  // messages (2 and 125,000 bytes a step) take about 0.0108 s on 100 Mbit/s, so 0.0008 s shows,
  // and 0.0002 s on 10 Gbit/s, all hidden. The report, the answer and --hardware's links
  // project it through one function.
  Recorded r("answer-overlap-budget");
  RunSpec spec = dense_with_messages(1, {0.5, 0.85});
  spec.steps = 8;
  spec.overlap_budget = 0.04;
  spec.wait_every = 4;
  r.add(spec);
  const auto model = build_model(*r.db, {"answer"}, {});
  REQUIRE(model->summaries.size() == 1);
  const ConfigSummary& s = model->summaries.front();
  CHECK(s.overlap_budget.mean == Approx(0.01));
  const double local = local_seconds(s);
  for (const char* text : {"100Mbit,50us", "10Gbit,50us"}) {
    INFO(text);
    const LinkSpec link = parse_link(text);
    const double whole = link.project(2, 125000);
    CHECK(step_on_link(s, link) == Approx(local + std::max(0.0, whole - 0.01)));
    AnswerLink on{.name = text, .spec = link};
    CHECK(model->answer->step(s, on) == Approx(step_on_link(s, link)));
  }
  CHECK(step_on_link(s, parse_link("100Mbit,50us")) > local + 0.0005);
  CHECK(step_on_link(s, parse_link("10Gbit,50us")) == Approx(local));
}

TEST_CASE("compute utilization is compute over the step on the runs' link, the same for the report and laconic runs",
          "[reports][answer]") {
  Recorded r("answer-utilization");
  const std::int64_t id = r.add(dense_with_messages(1, {0.5, 0.85}));
  const auto model = build_model(*r.db, {"answer"}, {});
  REQUIRE(model->summaries.size() == 1);
  const ConfigSummary& s = model->summaries.front();
  // The fixture's step: compute 0.035 s, no compression or wait, 0.002 s projected.
  CHECK(compute_utilization(s) == Approx(0.035 / 0.037));
  CHECK(run_compute_utilization(*r.db, storage::require_run(*r.db, id)) == compute_utilization(s));
  const std::string csv = [&] {
    write_report(*r.db, "answer", r.dir.file("out"), {.gnuplot = kNoFigures});
    return r.csv("step_time");
  }();
  CHECK_THAT(csv, Catch::Contains("compute_utilization"));
  CHECK_THAT(csv, Catch::Contains(raw_number(compute_utilization(s))));
}

TEST_CASE("an optimizer that compresses is a method: DeMo and AdamW-DDP share a row, and DeMo is not the baseline",
          "[reports][answer]") {
  // Both record compressor none(); DeMo's resolved compressor (its codec) is not full precision.
  Recorded r("answer-optimizer-method");
  RunSpec adamw = dense_with_messages(1, {0.5, 0.85});
  adamw.name = "optimizer=adamw,seed=1";
  adamw.swept = {{"optimizer", Value{std::string("adamw")}}, {"optimizer.lr", Value{0.002}}};
  RunSpec demo = dense_with_messages(1, {0.5, 0.84});
  demo.name = "optimizer=demo,seed=1";
  demo.swept = {{"optimizer", Value{std::string("demo")}}, {"optimizer.lr", Value{0.002}}};
  demo.link_bytes = 2000;
  r.add(adamw);
  const std::int64_t demo_id = r.add(demo);
  ResolvedRun resolved;
  resolved.compressor.full_precision = false;
  resolved.compressor.fixed_size = true;
  r.recorder->record_fact(demo_id, ResolvedRun::kFact, resolved.to_json());
  const auto model = build_model(*r.db, {"answer"}, {});
  REQUIRE(model->summaries.size() == 2);
  CHECK(model->grid.rows.size() == 1);
  const ConfigSummary* demo_summary = nullptr;
  for (const ConfigSummary& s : model->summaries)
    if (s.config->column.find("optimizer=demo") != std::string::npos) demo_summary = &s;
  REQUIRE(demo_summary != nullptr);
  CHECK(demo_summary->config->column == "none optimizer=demo lr=0.002");
  CHECK_FALSE(model->answer->is_baseline(*demo_summary));
  REQUIRE(model->answer->target_of(*demo_summary).baseline != nullptr);
  CHECK(model->answer->target_of(*demo_summary).baseline->config->column == "none optimizer=adamw lr=0.002");
}

TEST_CASE("on islands a link given for projection stands for the link between them, the inside link kept",
          "[reports][answer][islands]") {
  // 6 messages a step, 2 of them between islands, whose phases put 400 kB on the link between.
  const LinkSpec inside = parse_link("10Gbit,10us"), between = parse_link("100Mbit,1ms");
  const RecordedTraffic islands{6, 600000, 2, 200000, 400000, inside};
  REQUIRE(islands.on_islands());
  CHECK(communicate_on_link(between, islands, kNaN) ==
        Approx(inside.project(4, 400000) + between.project(2, 400000)));
  CHECK(communicate_on_link(between, islands, 0.5) == 0);  // less an overlap budget, at least 0
  // Runs recorded before their inside link was: every message on the one link.
  RecordedTraffic unknown = islands;
  unknown.inside.reset();
  CHECK_FALSE(unknown.on_islands());
  CHECK(communicate_on_link(between, unknown, kNaN) == Approx(between.project(6, 600000)));
  // One link: the same.
  const RecordedTraffic one_link{6, 600000, kNaN, kNaN, kNaN, std::nullopt};
  CHECK(communicate_on_link(between, one_link, kNaN) == Approx(between.project(6, 600000)));
}
