// Hardware profiles as a user gives them (docs/hardware.md): `laconic report --hardware FILE` on
// recorded runs, and the experiment field `hardware = profile { file = ... }` (checked with the
// experiment, at its line, and used by `laconic report` without a flag, from the runs' resolved
// fact even once the file is gone); a missing or malformed profile is refused naming the file and
// the field.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_harness.hpp"
#include "storage/database.hpp"
#include "tests/reports/fixture.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

// LeNet-5 as the fixture records it (62500 parameters, batch 64) and as tiny_experiment trains it
// (61706 parameters, batch 32).
const char* const kProfile = R"({
  "laconic_hardware_profile": 1, "name": "Test GPU",
  "models": [{"model": "lenet5", "batch_size": 64, "parameters": 62500,
              "forward": "0.3ms", "backward": "0.5ms", "optimizer": "0.1ms"},
             {"model": "lenet5", "batch_size": 32, "parameters": 61706,
              "forward": "0.2ms", "backward": "0.4ms", "optimizer": "0.1ms"}],
  "compressors": {"topk": {"compress": {"per_call": "30us", "per_element": "0.02ns"}}}
})";

void record_runs(const std::string& db_path) {
  auto db = storage::Database::open(db_path);
  storage::Recorder recorder(*db);
  const auto e = recorder.add_experiment("hw", "hw.lua", "h");
  reports::testing::record_run(*db, recorder, e, "hw", reports::testing::dense_with_messages(1, {0.5, 0.85}));
  reports::testing::record_run(*db, recorder, e, "hw", reports::testing::topk_with_messages(1, {0.5, 0.85}));
}

}  // namespace

TEST_CASE("laconic report --hardware projects the runs onto a profile, and refuses a bad one by name",
          "[cli][report][hardware]") {
  const auto dir = make_temp_dir();
  record_runs(dir + "/runs.db");
  write_file(dir + "/gpu.json", kProfile);
  auto r = run_laconic(
      dir, "report hw --db runs.db --out rep --hardware gpu.json --link 10Gbit --allow-missing-figures", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const std::string md = read_file(dir + "/rep/report.md");
  CHECK_THAT(md, Catch::Contains("- hardware: Test GPU (gpu.json; projected)"));
  CHECK_THAT(md, Catch::Contains("## On Test GPU (projected)"));
  CHECK(std::filesystem::exists(dir + "/rep/tables/hardware_step.csv"));

  r = run_laconic(dir, "report hw --db runs.db --out rep --hardware missing.json", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot read hardware profile 'missing.json'"));
  write_file(dir + "/bad.json", R"({"laconic_hardware_profile": 1, "name": "x", "models": [{"model": "lenet5"}]})");
  r = run_laconic(dir, "report hw --db runs.db --out rep --hardware bad.json", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("hardware profile bad.json: models[0].batch_size is missing"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardware = profile { file = ... } is checked with the experiment and projected by laconic report",
          "[cli][report][hardware]") {
  const auto dir = make_temp_dir();
  write_file(dir + "/hw.lua", tiny_experiment("hw",
                                              "  max_steps = 3,\n  compressor = sweep { none(), topk() },\n"
                                              "  hardware = profile { file = \"gpu.json\" },\n"));
  auto r = run_laconic(dir, "check hw.lua", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("hw.lua:") && Catch::Contains("cannot read hardware profile"));
  write_file(dir + "/gpu.json", kProfile);
  r = run_laconic(dir, "run hw.lua --db runs.db --quiet", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  r = run_laconic(dir, "report hw --db runs.db --out rep --allow-missing-figures", 120);
  CHECK(r.status == 0);
  const std::string md = read_file(dir + "/rep/report.md");
  CHECK_THAT(md, Catch::Contains("## On Test GPU (projected)"));
  // Both runs were projected: the profile covers LeNet-5 at batch 32 and Top-k.
  CHECK_THAT(md, !Catch::Contains("Not projected"));
  // The runs hold the profile itself (run fact `resolved`): a report needs no file any more.
  std::filesystem::remove(dir + "/gpu.json");
  r = run_laconic(dir, "report hw --db runs.db --out again --allow-missing-figures", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const std::string again = read_file(dir + "/again/report.md");
  CHECK_THAT(again, Catch::Contains("- hardware: Test GPU (gpu.json; projected)"));
  CHECK_THAT(again, Catch::Contains("## On Test GPU (projected)") && !Catch::Contains("Not projected"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a profile named relative to an experiment given relatively is found by a report run anywhere",
          "[cli][report][hardware]") {
  const auto dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/exp");
  std::filesystem::create_directories(dir + "/elsewhere");
  write_file(dir + "/exp/hw.lua",
             tiny_experiment("hw", "  max_steps = 3,\n  hardware = profile { file = \"gpu.json\" },\n"));
  write_file(dir + "/exp/gpu.json", kProfile);
  auto r = run_laconic(dir, "run exp/hw.lua --db runs.db --quiet", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  // The run recorded exp/gpu.json, relative to `dir`, and `dir` as its working directory.
  r = run_laconic(dir + "/elsewhere", "report hw --db ../runs.db --out rep --allow-missing-figures", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(read_file(dir + "/elsewhere/rep/report.md"), Catch::Contains("## On Test GPU (projected)"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hardware = by_hand { ... } is checked with the experiment and projected by a report run anywhere",
          "[cli][report][hardware]") {
  const auto dir = make_temp_dir();
  std::filesystem::create_directories(dir + "/exp");
  std::filesystem::create_directories(dir + "/elsewhere");
  const std::string by_hand =
      "  hardware = by_hand { label = \"Hand GPU\", forward = \"0.2ms\", backward = \"0.4ms\",\n"
      "                       compressors = \"costs.json\" },\n";
  write_file(dir + "/exp/hw.lua",
             tiny_experiment("hw", "  max_steps = 3,\n  compressor = sweep { none(), topk() },\n" + by_hand));
  auto r = run_laconic(dir, "check exp/hw.lua", 60);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("hw.lua:") && Catch::Contains("cannot read compressor costs"));
  write_file(dir + "/exp/costs.json",
             R"({"compressors": {"topk": {"compress": {"per_call": "30us", "per_element": "0.02ns"}}}})");
  r = run_laconic(dir, "run exp/hw.lua --db runs.db --quiet", 300);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  r = run_laconic(dir + "/elsewhere", "report hw --db ../runs.db --out rep --allow-missing-figures", 120);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  const std::string md = read_file(dir + "/elsewhere/rep/report.md");
  CHECK_THAT(md, Catch::Contains("- hardware: Hand GPU (by_hand { ... }; projected)"));
  CHECK_THAT(md, Catch::Contains("## On Hand GPU (projected)"));
  CHECK_THAT(md, !Catch::Contains("Not projected"));  // both runs: every model, and Top-k's costs
  std::filesystem::remove_all(dir);
}
