// laconic run FILE --set KEY=VALUE: the experiment changed from the command line, checked like
// the file's own fields and recorded in every run's configuration.
#include <catch2/catch.hpp>

#include "engine/core/error.hpp"
#include "fake_catalog.hpp"
#include "lua/experiment.hpp"

using Catch::Matchers::Contains;
using laconic::lua::load_experiment;
using laconic::lua::LoadOptions;
using laconic::lua::testing::FakeCatalog;
using laconic::lua::testing::load_error;
using laconic::lua::testing::TempDir;

namespace {

const char* const kFile =
    "experiment {\n"
    "  name = 'o',\n"
    "  epochs = 2,\n"
    "  compressor = sweep { none(), topk { ratio = 0.1 } },\n"
    "  seeds = { 1 },\n"
    "}\n";

LoadOptions with(std::vector<std::string> overrides) {
  LoadOptions options;
  options.overrides = std::move(overrides);
  return options;
}

}  // namespace

TEST_CASE("--set changes scalar fields and fields of components, in every run", "[lua][overrides]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("o.lua", kFile);
  const auto plan =
      load_experiment(path, catalog, with({"epochs=1", "network.bandwidth=100Mbit", "compressor.ratio=0.05"}));
  REQUIRE(plan.runs.size() == 2);
  for (const auto& run : plan.runs) {
    CHECK(run.epochs == 1);
    CHECK(run.network.text("bandwidth") == "100Mbit");  // the default link the file left out
  }
  CHECK(plan.runs[1].compressor.number("ratio") == 0.05);
  CHECK(plan.runs[1].name == "compressor=topk,ratio=0.05,seed=1");  // the swept component's name follows
  CHECK(plan.runs[0].compressor.name == "none");                    // none has no ratio: left as it was
}

TEST_CASE("--set replaces a sweep, the seeds and the runs per seed", "[lua][overrides]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("o.lua", kFile);
  auto plan = load_experiment(path, catalog, with({"compressor=topk", "seeds=1,2", "runs_per_seed=2"}));
  REQUIRE(plan.runs.size() == 4);
  // The file swept the compressor: its one value from --set still names the runs.
  CHECK(plan.runs[0].name == "compressor=topk,seed=1");
  CHECK(plan.runs[1].name == "compressor=topk,seed=1,repeat=1");
  CHECK(plan.runs[1].repetition == 1);
  CHECK(plan.runs[1].seed == 1);
  CHECK(plan.runs[3].name == "compressor=topk,seed=2,repeat=1");
  CHECK(plan.runs[3].compressor.name == "topk");
  plan = load_experiment(path, catalog, with({"name=renamed"}));
  CHECK(plan.name == "renamed");
}

TEST_CASE("a wrong --set is refused with the override and what is valid", "[lua][overrides]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("o.lua", kFile);
  CHECK(load_error(path, catalog, with({"epochs=0"})) ==
        "--set epochs=0: experiment field 'epochs' (--set) must be an int >= 1, got int 0");
  CHECK_THAT(load_error(path, catalog, with({"epoch=1"})),
             Contains("--set epoch=1: unknown experiment field 'epoch'; did you mean 'epochs'? (known: baseline, batch_size"));
  CHECK_THAT(load_error(path, catalog, with({"compressor.ratio=abc"})),
             Contains("--set compressor.ratio=abc: topk.ratio must be a number, got string \"abc\""));
  CHECK_THAT(load_error(path, catalog, with({"compressor.levels=4"})),
             Contains("no compressor of field 'compressor' has a field 'levels' (none, topk;"));
  CHECK_THAT(load_error(path, catalog, with({"epochs"})), Contains("--set takes KEY=VALUE"));
  CHECK_THAT(load_error(path, catalog, with({"compressor=qsgd"})), Contains("unknown compressor 'qsgd'; known: "));
}

TEST_CASE("runs_per_seed trains each seed again under a name of its own", "[lua][overrides]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("r.lua", "experiment { name = 'r', seeds = { 3 }, runs_per_seed = 3 }\n");
  const auto plan = load_experiment(path, catalog);
  REQUIRE(plan.runs.size() == 3);
  CHECK(plan.runs[0].name == "seed=3");
  CHECK(plan.runs[2].name == "seed=3,repeat=2");
  CHECK(plan.runs[2].swept.count("repetition") == 0);  // not a swept variable: one configuration
  CHECK_THAT(load_error(dir.write("bad.lua", "experiment { name = 'r', runs_per_seed = 0 }\n"), catalog),
             Contains("experiment field 'runs_per_seed' must be an int >= 1, got int 0"));
}

TEST_CASE("--set takes a Lua expression for a component field: a component with fields, or a sweep",
          "[lua][overrides]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto path = dir.write("o.lua", kFile);
  auto plan = load_experiment(path, catalog, with({"compressor=sweep{none(), topk{ratio=0.05}, topk{ratio=0.2}}"}));
  REQUIRE(plan.runs.size() == 3);
  CHECK(plan.runs[0].compressor.name == "none");
  CHECK(plan.runs[1].compressor.number("ratio") == 0.05);
  CHECK(plan.runs[2].name == "compressor=topk,ratio=0.2,seed=1");
  // In order with the plain overrides: a field set after the expression changes its components.
  plan = load_experiment(path, catalog, with({"compressor=topk{ratio=0.3}", "compressor.ratio=0.4"}));
  REQUIRE(plan.runs.size() == 1);
  CHECK(plan.runs[0].compressor.number("ratio") == 0.4);
  CHECK(plan.runs[0].name == "compressor=topk,ratio=0.4,seed=1");  // named as the file's sweep named its runs
  CHECK_THAT(load_error(path, catalog, with({"compressor=topk{ratio=2}"})), Contains("topk.ratio must be in (0, 1]"));
  CHECK_THAT(load_error(path, catalog, with({"compressor=topk{ratio=0.1"})), Contains("--set compressor"));
  // Text fields keep their text: a name may hold parentheses.
  CHECK(load_experiment(path, catalog, with({"name=run(1)"})).name == "run(1)");
  // A scalar field takes a sweep too.
  CHECK(load_experiment(path, catalog, with({"epochs=sweep{1, 3}"})).runs.size() == 4);
}
