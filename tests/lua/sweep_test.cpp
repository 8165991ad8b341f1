#include <catch2/catch.hpp>

#include "engine/core/hash.hpp"
#include "fake_catalog.hpp"
#include "lua/experiment.hpp"
#include "lua/sweep.hpp"

using laconic::fnv1a_hex;
using laconic::Value;
using laconic::lua::format_name_value;

TEST_CASE("fnv1a_hex matches the published FNV-1a 64 test vectors", "[lua][hash]") {
  CHECK(fnv1a_hex("") == "cbf29ce484222325");
  CHECK(fnv1a_hex("a") == "af63dc4c8601ec8c");
  CHECK(fnv1a_hex("foobar") == "85944171f73967e8");
}

TEST_CASE("run-name values are written as a user would type them", "[lua][sweep]") {
  CHECK(format_name_value(Value{0.01}) == "0.01");
  CHECK(format_name_value(Value{1.0}) == "1");
  CHECK(format_name_value(Value{1e-05}) == "1e-05");
  CHECK(format_name_value(Value{std::int64_t{64}}) == "64");
  CHECK(format_name_value(Value{true}) == "true");
  CHECK(format_name_value(Value{std::string("ring")}) == "ring");
}

TEST_CASE("sweeps of one group are paired: they advance together instead of multiplying", "[lua][sweep]") {
  laconic::lua::testing::TempDir dir;
  laconic::lua::testing::FakeCatalog catalog;
  const auto plan = laconic::lua::load_experiment(dir.write("pair.lua", R"(
experiment {
  name = "pair",
  compressor = sweep { none(), topk { ratio = 0.1 }, topk { ratio = 0.01 }, group = "method" },
  batch_size = sweep { 32, 64, 128, group = "method" },
  workers = sweep { 1, 2 },
}
)"),
                                                  catalog);
  REQUIRE(plan.runs.size() == 6);
  CHECK(plan.runs[0].name == "batch_size=32,compressor=none,workers=1,seed=1");
  CHECK(plan.runs[1].name == "batch_size=32,compressor=none,workers=2,seed=1");
  CHECK(plan.runs[2].name == "batch_size=64,compressor=topk,ratio=0.1,workers=1,seed=1");
  CHECK(plan.runs[5].name == "batch_size=128,compressor=topk,ratio=0.01,workers=2,seed=1");
  CHECK(plan.runs[5].compressor.number("ratio") == 0.01);

  const auto bad = dir.write("bad.lua", R"(experiment {
  name = "bad",
  compressor = sweep { none(), topk(), group = "m" },
  batch_size = sweep { 32, 64, 128, group = "m" },
})");
  CHECK(laconic::lua::testing::load_error(bad, catalog) ==
        bad +
            ":1: sweeps of group 'm' are paired and need the same number of alternatives: "
            "'batch_size' has 3, 'compressor' has 2");
  const auto typo = dir.write("typo.lua", "local s = sweep { 1, 2, group = 3 }\n");
  CHECK(laconic::lua::testing::load_error(typo, catalog) ==
        typo + ":1: sweep.group must be a non-empty string, got int 3");
}

TEST_CASE("exchange is \"gradient\" or \"update\"; a run that exchanges updates says so in its name",
          "[lua][sweep][exchange]") {
  laconic::lua::testing::TempDir dir;
  laconic::lua::testing::FakeCatalog catalog;
  const auto swept = laconic::lua::load_experiment(
      dir.write("modes.lua", "experiment { name = 'm', exchange = sweep { 'gradient', 'update' } }\n"), catalog);
  REQUIRE(swept.runs.size() == 2);
  CHECK(swept.runs[0].name == "exchange=gradient,seed=1");
  CHECK(swept.runs[1].name == "exchange=update,seed=1");
  CHECK(swept.runs[1].exchange == laconic::Exchange::Update);
  CHECK(swept.runs[1].to_json()["exchange"] == "update");
  CHECK_FALSE(swept.runs[0].to_json().contains("exchange"));  // configurations of older runs compare equal
  // Not swept: the default says nothing, "update" still names itself.
  const auto fixed = laconic::lua::load_experiment(
      dir.write("fixed.lua", "experiment { name = 'f', exchange = 'update', workers = sweep { 1, 2 } }\n"), catalog);
  CHECK(fixed.runs[0].name == "exchange=update,workers=1,seed=1");
  CHECK(laconic::RunConfig::from_json(fixed.runs[0].to_json()).exchange == laconic::Exchange::Update);
  const auto plain = laconic::lua::load_experiment(dir.write("plain.lua", "experiment { name = 'p' }\n"), catalog);
  CHECK(plain.runs[0].name == "seed=1");
  CHECK(plain.runs[0].exchange == laconic::Exchange::Gradient);
  const auto bad = dir.write("bad.lua", "experiment { name = 'b', exchange = 'sideways' }\n");
  CHECK(laconic::lua::testing::load_error(bad, catalog) ==
        bad + ":1: experiment field 'exchange' must be \"gradient\" or \"update\", got string \"sideways\"");
}

TEST_CASE("elastic takes Lua's true and false (and --set's), a run with true says so in its name",
          "[lua][sweep][elastic]") {
  laconic::lua::testing::TempDir dir;
  laconic::lua::testing::FakeCatalog catalog;
  const auto swept = laconic::lua::load_experiment(
      dir.write("e.lua", "experiment { name = 'e', elastic = sweep { false, true } }\n"), catalog);
  REQUIRE(swept.runs.size() == 2);
  CHECK(swept.runs[0].name == "elastic=false,seed=1");
  CHECK(swept.runs[1].name == "elastic=true,seed=1");
  CHECK_FALSE(swept.runs[0].elastic);
  CHECK(swept.runs[1].elastic);
  CHECK(swept.runs[1].to_json()["elastic"] == "true");
  CHECK_FALSE(swept.runs[0].to_json().contains("elastic"));  // configurations of older runs compare equal
  CHECK(laconic::RunConfig::from_json(swept.runs[1].to_json()).elastic);
  laconic::lua::LoadOptions set;
  set.overrides = {"elastic=true"};
  const auto overridden =
      laconic::lua::load_experiment(dir.write("p.lua", "experiment { name = 'p' }\n"), catalog, set);
  CHECK(overridden.runs[0].elastic);
  const auto bad = dir.write("bad.lua", "experiment { name = 'b', elastic = 'yes' }\n");
  CHECK(laconic::lua::testing::load_error(bad, catalog) ==
        bad + ":1: experiment field 'elastic' must be true or false, got string \"yes\"");
}

TEST_CASE("sweeps that would make more runs than one experiment may plan are refused before any is built",
          "[lua][sweep]") {
  laconic::lua::testing::TempDir dir;
  laconic::lua::testing::FakeCatalog catalog;
  // 100 x 100 x 100 x 3 seeds: 3,000,000 runs.
  const auto path = dir.write("huge.lua",
                              "local v = {}\nfor i = 1, 100 do v[i] = i end\n"
                              "experiment {\n  name = 'x',\n  epochs = sweep(v),\n  max_steps = sweep(v),\n"
                              "  batch_size = sweep(v),\n  seeds = { 1, 2, 3 },\n}\n");
  const std::string message = laconic::lua::testing::load_error(path, catalog);
  CHECK_THAT(message, Catch::Contains("the sweeps make 3000000 runs (3 seeds x 100 (batch_size) x 100 (epochs) x 100 "
                                      "(max_steps)), more than the 100000 one experiment may plan"));
}
