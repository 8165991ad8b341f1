// device = cpu() / cuda() / auto() (issue 69) as a user meets it without a GPU: auto() trains on
// the CPU and the run's resolved fact and the report say so; cuda() is refused with the reason.
// Training on a GPU is not built: no GPU ran anything here.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_harness.hpp"

using namespace laconic::testing;

TEST_CASE("device = auto() trains on the CPU and says so; device = cuda() is refused with the reason",
          "[cli][device]") {
  const std::string dir = make_temp_dir();
  const auto experiment = [](const std::string& device) {
    return "experiment {\n"
           "  name = \"dev\",\n"
           "  data = synthetic { shape = {1, 8, 8}, n = 256, test_n = 64 },\n"
           "  model = mlp { sizes = {64, 16, 10} },\n"
           "  optimizer = sgd { lr = 0.1 },\n"
           "  batch_size = 16, workers = 2, max_steps = 4, eval_limit = 64, timeout = 30,\n"
           "  device = " +
           device +
           ",\n"
           "}\n";
  };
  write_file(dir + "/gpu.lua", experiment("cuda { index = 0 }"));
  const auto refused = run_laconic(dir, "check gpu.lua", 120);
  CHECK(refused.status != 0);
  CHECK_THAT(refused.err,
             Catch::Contains("device = cuda() cannot train yet: training on a GPU is not built (issue 69)"));
  write_file(dir + "/auto.lua", experiment("auto()"));
  const auto run = run_laconic(dir, "run auto.lua --db a.db --quiet", 120);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  const auto shown = run_laconic(dir, "show 1 --db a.db", 60);
  CHECK_THAT(shown.out, Catch::Contains("\"device\":\"cpu\""));
  CHECK_THAT(shown.out, Catch::Contains("\"name\": \"auto\""));  // the configuration keeps what was asked
  const auto report = run_laconic(dir, "report dev --db a.db --out rep", 120);
  REQUIRE(report.status == 0);
  CHECK_THAT(read_file(dir + "/rep/report.md"), Catch::Contains("- trained on: cpu (every run)"));
  std::filesystem::remove_all(dir);
}
