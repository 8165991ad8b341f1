// The advice (reports/advice.hpp) is the answer's numbers on the asked link, ranked: a candidate
// whose probe reached the target has the answer's time to it and step_on_link's step (the same
// figures the report's "Projected onto other links" gives), one that did not is extrapolated
// from its curve, and one whose curve cannot say is dropped with the reason.
#include <catch2/catch.hpp>

#include "reports/advice.hpp"
#include "reports/report_model.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::reports;
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
    const TimeToTarget t = model->answer->time_to_target(*row.summary, {link.text, link});
    CHECK(row.seconds == t.seconds);  // one figure: the answer's
    CHECK(row.step == step_on_link(*row.summary, link));
  }
  CHECK(advice.ranked[0].crossover > 1e8);  // faster than dense up to beyond the link's own rate
  REQUIRE(advice.dropped.size() == 1);
  CHECK_THAT(advice.dropped[0].dropped, Catch::Contains("not reached within its probe") &&
                                            Catch::Contains("not improving"));
  const Table table = advice_table(advice);
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0][0] == "1");
  CHECK(table.rows[2][0] == "-");
  CHECK(table.csv.rows[0][4] == "probe");
}
