// One figure per fact: a sweep of none, fp16, bf16, Top-k, QSGD, PowerSGD and signSGD over two
// seeds (QSGD reaching the target in one of them; tests/reports/verdict_sweep.hpp) gives every
// configuration one time to target, and report.md, the CSV tables and the UI's JSON all carry it.
#include <catch2/catch.hpp>

#include <cmath>

#include "reports/answer.hpp"
#include "reports/report.hpp"
#include "tests/reports/csv_cells.hpp"
#include "tests/reports/verdict_sweep.hpp"
#include "ui/api.hpp"

using namespace laconic;
using namespace laconic::reports::testing;

TEST_CASE("a configuration's time to target is one figure in report.md, the CSVs and the UI's JSON",
          "[ui][api][reports]") {
  reports::testing::TempDir dir("one-figure");
  auto db = storage::Database::open(dir.file("runs.db"));
  record_verdict_sweep(*db, "sweep");
  const auto paths = reports::write_report(*db, "sweep", dir.file("out"), {.gnuplot = {"/nonexistent/gnuplot", 5}});
  const std::string md = read_text(paths.markdown);
  INFO(md);
  const auto answer = csv_rows(read_text(dir.file("out/tables/answer.csv")));
  const auto to_target = csv_rows(read_text(dir.file("out/tables/time_to_target.csv")));
  const auto pays_off = csv_rows(read_text(dir.file("out/tables/pays_off.csv")));
  const nlohmann::json model = ui::experiment_json(*db, "sweep");
  const nlohmann::json rates = model["bandwidths"];
  std::size_t gigabit = 0;
  while (gigabit < rates.size() && std::fabs(rates[gigabit].get<double>() - 1e9) > 1) ++gigabit;
  REQUIRE(gigabit < rates.size());

  // none is the baseline; fp16 is judged like any other compressor.
  CHECK_THAT(md, Catch::Contains("Baseline: none (the runs' configuration: baseline = none, the default)."));
  REQUIRE(model["configurations"].size() == 7);
  for (const auto& c : model["configurations"]) {
    const std::string label = c["label"];
    INFO(label);
    CHECK(c["baseline"] == (label == "none"));
    if (label == "signsgd") {  // never reached: no time anywhere
      CHECK(c["time"]["seconds"].is_null());
      CHECK(std::isnan(csv_value(answer, label, "time_s")));
      CHECK(std::isnan(csv_value(to_target, label, "time_s")));
      CHECK(c["scan"]["seconds"][gigabit].is_null());
      continue;
    }
    const double seconds = c["time"]["seconds"].get<double>();
    // The fixture's runs are on 1Gbit, 50us: the scan's 1 Gbit/s point is their own link.
    CHECK(c["link"] == "1Gbit, 50us");
    CHECK(csv_value(answer, label, "time_s") == Approx(seconds).epsilon(1e-9));
    CHECK(csv_value(to_target, label, "time_s") == Approx(seconds).epsilon(1e-9));
    CHECK(csv_value(pays_off, label, "time_to_target_1Gbit_s") == Approx(seconds).epsilon(1e-9));
    CHECK(c["scan"]["seconds"][gigabit].get<double>() == Approx(seconds).epsilon(1e-9));
    CHECK(c["scan"]["time_text"][gigabit] == c["time"]["text"]);
    // The interval's ends, where there is one, agree too, and never lie below zero.
    if (!c["time"]["low"].is_null()) {
      CHECK(c["time"]["low"].get<double>() > 0);
      CHECK(csv_value(answer, label, "time_low_s") == Approx(c["time"]["low"].get<double>()).epsilon(1e-9));
      CHECK(csv_value(to_target, label, "time_high_s") == Approx(c["time"]["high"].get<double>()).epsilon(1e-9));
    }
  }
  const auto config = [&](const std::string& label) {
    for (const auto& c : model["configurations"])
      if (c["label"] == label) return c;
    FAIL("no configuration " << label);
    return nlohmann::json();
  };
  // Reached in one of two runs: a time (from the run that did), said to be from one of two.
  CHECK(config("qsgd")["time"]["text"].get<std::string>().ends_with("(1 of 2 runs reached it)"));
  CHECK(config("qsgd")["time"]["reached"] == 1);
  CHECK_THAT(config("qsgd")["versus"].get<std::string>(),
             Catch::StartsWith("inconclusive (") && Catch::Contains("1 of 2 runs of qsgd reached the target"));
  CHECK_THAT(md, !Catch::Contains("Never a winner"));
  // The bandwidths and break-evens the page shows are the report's words for them (rate_text).
  REQUIRE(model["bandwidth_texts"].size() == rates.size());
  for (std::size_t i = 0; i < rates.size(); ++i)
    CHECK(model["bandwidth_texts"][i] == reports::rate_text(rates[i].get<double>()));
  CHECK(model["bandwidth_texts"][gigabit] == "1 Gbit/s");
  for (const auto& c : model["configurations"]) {
    INFO(c["label"].get<std::string>());
    for (const char* figure : {"break_even", "crossover"}) {
      const auto& value = c["scan"][figure];
      const auto& text = c["scan"][std::string(figure) + "_text"];
      if (value.is_null()) {
        CHECK(text.is_null());
        continue;
      }
      CHECK(text == reports::rate_text(value.get<double>()));
      CHECK_THAT(md, Catch::Contains(text.get<std::string>()));
    }
  }
}
