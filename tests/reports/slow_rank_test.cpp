// "Which rank is slow": the rank the others waited for and each phase's slowest rank, computed
// from per-rank rows written by hand, in the report's Markdown and CSV; no section when nobody
// was waited for.
#include <catch2/catch.hpp>

#include "fixture.hpp"
#include "reports/report.hpp"
#include "reports/slow_rank.hpp"

using namespace laconic;
using namespace laconic::reports;
using namespace laconic::reports::testing;

namespace {

RunSpec four_workers(const std::string& name) {
  RunSpec spec = dense(1, {0.5, 0.75});
  spec.name = name;
  spec.workers = 4;
  spec.wait = 0.001;
  return spec;
}

}  // namespace

TEST_CASE("the rank the others waited for and each phase's slowest rank come from the per-rank rows",
          "[reports][slow_rank]") {
  TempDir dir("slow-rank");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("slow", "slow.lua", "h");
  RunSpec slow = four_workers("compressor=none,seed=1");
  slow.straggler = RunSpec::Straggler{2, 0.05};
  const auto run = record_run(*db, recorder, e, "slow", slow);

  const SlowRank s = slow_rank_of(*db, run, 4);
  CHECK(s.ranks == 4);
  CHECK(s.exchanges == 4);  // 2 epochs x 2 steps
  CHECK(s.waited_exchanges == 4);
  CHECK(s.waited_for == 2);
  CHECK(s.arrived_last == 4);
  // Each exchange: three ranks waited 0.051 s, rank 2 0.001 s.
  CHECK(s.caused_seconds == Approx(4 * 3 * 0.051));
  CHECK(s.caused_share == Approx(3 * 0.051 / (3 * 0.051 + 0.001)));
  REQUIRE(s.phases.size() == 5);
  CHECK(s.phases.back().phase == "straggler delay");
  CHECK(s.phases.back().rank == 2);
  CHECK(s.phases.back().mean == Approx(0.05));
  CHECK(s.phases.back().median == 0);
  CHECK(s.phases.front().phase == "forward");
  CHECK(s.phases.front().ratio() == Approx(1.0));

  const auto paths = write_report(*db, "slow", dir.file("out"), {.gnuplot = kNoFigures});
  const std::string md = read_text(paths.markdown);
  INFO(md);
  CHECK(md.find("## Which rank is slow") != std::string::npos);
  CHECK(has_line(md, "Rank 2 of compressor=none,seed=1 arrived last at 4 of 4 exchanges and caused 99% of the "
                     "run's waiting; its straggler delay takes 0.05 s a step, the median rank's 0 s."));
  CHECK(has_line(md, "| compressor=none,seed=1 | rank 2 | 99% | 4 of 4 | rank 0, +0 s (1.00x) | rank 0, +0 s (1.00x) | "
                     "rank 0, +0 s (1.00x) | - | rank 2, +0.05 s |"));
  const std::string csv = read_text(dir.file("out/tables/slow_rank.csv"));
  INFO(csv);
  CHECK(csv.find("\"compressor=none,seed=1\",2,") != std::string::npos);
}

TEST_CASE("no section when every rank waited as long as the others", "[reports][slow_rank]") {
  TempDir dir("even-ranks");
  auto db = storage::Database::open(dir.file("runs.db"));
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("even", "even.lua", "h");
  const auto run = record_run(*db, recorder, e, "even", four_workers("compressor=none,seed=1"));
  const SlowRank s = slow_rank_of(*db, run, 4);
  CHECK(s.exchanges == 4);
  CHECK(s.waited_exchanges == 0);
  CHECK(s.waited_for == -1);
  const auto paths = write_report(*db, "even", dir.file("out"), {.gnuplot = kNoFigures});
  CHECK(read_text(paths.markdown).find("Which rank is slow") == std::string::npos);
}
