#include <catch2/catch.hpp>

#include <set>

#include "engine/core/error.hpp"
#include "fake_catalog.hpp"
#include "lua/experiment.hpp"

using laconic::ComponentSpec;
using laconic::Value;
using laconic::lua::load_experiment;
using laconic::lua::testing::FakeCatalog;
using laconic::lua::testing::load_error;
using laconic::lua::testing::TempDir;

namespace {

const char* const kQuickstart = R"(experiment {
  name       = "quickstart",
  data       = fashion_mnist(),
  model      = lenet5(),
  optimizer  = sgd { lr = 0.05, momentum = 0.9 },
  batch_size = 64,
  epochs     = 1,
  workers    = 2,
  topology   = allreduce { algorithm = "ring" },
  schedule   = synchronous(),
  compressor = sweep { none(), topk { ratio = 0.01, error_feedback = true } },
  seeds      = { 1 },
}
)";

}  // namespace

TEST_CASE("the quickstart example expands into one run per compressor", "[lua][sweep]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("quick.lua", kQuickstart);
  const auto plan = load_experiment(path, catalog);

  CHECK(plan.name == "quickstart");
  CHECK(plan.file == path);
  CHECK(plan.file_hash.size() == 16);
  REQUIRE(plan.runs.size() == 2);
  CHECK(plan.runs[0].name == "compressor=none,seed=1");
  CHECK(plan.runs[1].name == "compressor=topk,ratio=0.01,error_feedback=true,seed=1");

  const auto& topk = plan.runs[1];
  CHECK(topk.experiment == "quickstart");
  CHECK(topk.compressor == ComponentSpec{"compressor", "topk", {{"ratio", 0.01}, {"error_feedback", true}}});
  CHECK(topk.optimizer == ComponentSpec{"optimizer", "sgd", {{"lr", 0.05}, {"momentum", 0.9}}});
  CHECK(topk.topology == ComponentSpec{"topology", "allreduce", {{"algorithm", std::string("ring")}}});
  CHECK(topk.dataset.name == "fashion_mnist");
  CHECK(topk.model.name == "lenet5");
  CHECK(topk.schedule.name == "synchronous");
  CHECK(topk.batch_size == 64);
  CHECK(topk.epochs == 1);
  CHECK(topk.workers == 2);
  CHECK(topk.seed == 1);
  CHECK(topk.repetition == 0);
  CHECK(topk.swept == std::map<std::string, Value>{{"compressor", std::string("topk")},
                                                   {"compressor.ratio", 0.01},
                                                   {"compressor.error_feedback", true},
                                                   {"seed", std::int64_t{1}}});
  CHECK(plan.runs[0].swept ==
        std::map<std::string, Value>{{"compressor", std::string("none")}, {"seed", std::int64_t{1}}});
}

TEST_CASE("omitted fields take the catalog's default components and RunConfig's scalars", "[lua][sweep]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("min.lua", "experiment { name = 'min' }\n"), catalog);
  REQUIRE(plan.runs.size() == 1);
  const auto& run = plan.runs[0];
  CHECK(run.name == "seed=1");
  CHECK(run.compressor == ComponentSpec{"compressor", "none", {}});
  CHECK(run.optimizer == ComponentSpec{"optimizer", "sgd", {{"lr", 0.01}, {"momentum", 0.0}}});
  CHECK(run.topology.fields.at("algorithm") == Value{std::string("ring")});
  CHECK(run.batch_size == 64);
  CHECK(run.epochs == 1);
  CHECK(run.workers == 2);
  CHECK(run.max_steps == 0);
  CHECK(run.eval_limit == 0);
  CHECK(run.timeout == 60.0);
}

TEST_CASE("scalar fields reach every run", "[lua]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("s.lua",
                                              "experiment { name = 's', batch_size = 2^5, epochs = 3, workers = 4,\n"
                                              "  max_steps = 10, eval_limit = 100, timeout = 2.5 }\n"),
                                    catalog);
  const auto& run = plan.runs.at(0);
  CHECK(run.batch_size == 32);
  CHECK(run.epochs == 3);
  CHECK(run.workers == 4);
  CHECK(run.max_steps == 10);
  CHECK(run.eval_limit == 100);
  CHECK(run.timeout == 2.5);
}

TEST_CASE("two sweeps times two seeds give every combination once, in field-name order", "[lua][sweep]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("grid.lua", R"(
experiment {
  name = "grid",
  optimizer = sweep { sgd { lr = 0.1 }, sgd { lr = 0.01, momentum = 0.9 } },
  batch_size = sweep { 32, 64, 128 },
  seeds = { 1, 2 },
}
)"),
                                    catalog);
  REQUIRE(plan.runs.size() == 12);
  std::set<std::string> names;
  for (const auto& run : plan.runs) names.insert(run.name);
  CHECK(names.size() == 12);
  CHECK(plan.runs[0].name == "batch_size=32,optimizer=sgd,lr=0.1,seed=1");
  CHECK(plan.runs[1].name == "batch_size=32,optimizer=sgd,lr=0.1,seed=2");
  CHECK(plan.runs[2].name == "batch_size=32,optimizer=sgd,lr=0.01,momentum=0.9,seed=1");
  CHECK(plan.runs[11].name == "batch_size=128,optimizer=sgd,lr=0.01,momentum=0.9,seed=2");
  CHECK(plan.runs[11].batch_size == 128);
  CHECK(plan.runs[11].seed == 2);
  CHECK(plan.runs[11].optimizer.number("momentum") == 0.9);
  CHECK(plan.runs[11].swept.at("batch_size") == Value{std::int64_t{128}});
  CHECK(plan.runs[11].swept.at("optimizer.lr") == Value{0.01});
}

TEST_CASE("files may define helpers in globals and locals", "[lua]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("helpers.lua", R"(
function ratios(list)
  local out = {}
  for i, r in ipairs(list) do out[i] = topk { ratio = r } end
  return out
end
local name = string.format("%s-%d", "helpers", 3)
experiment { name = name, compressor = sweep(ratios { 0.1, 0.5, 1 }) }
)"),
                                    catalog);
  REQUIRE(plan.runs.size() == 3);
  CHECK(plan.name == "helpers-3");
  CHECK(plan.runs[2].name == "compressor=topk,ratio=1,seed=1");
  CHECK(plan.runs[2].compressor.fields.at("ratio") == Value{1.0});
}

TEST_CASE("identical alternatives are refused because their runs would share a name", "[lua]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("dup.lua", "\nexperiment { name = 'd', compressor = sweep { topk{}, topk{} } }\n");
  CHECK(load_error(path, catalog) == path +
                                         ":2: two runs would both be named 'compressor=topk,seed=1'; "
                                         "make the alternatives of each sweep differ");
}

TEST_CASE("the file hash changes when the file changes", "[lua]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("h.lua", "experiment { name = 'h' }\n");
  const auto first = load_experiment(path, catalog).file_hash;
  CHECK(load_experiment(path, catalog).file_hash == first);
  dir.write("h.lua", "experiment { name = 'h', epochs = 2 }\n");
  const auto second = load_experiment(path, catalog).file_hash;
  CHECK(second != first);
  CHECK(second.find_first_not_of("0123456789abcdef") == std::string::npos);
}

TEST_CASE("a missing default component makes the field required", "[lua]") {
  TempDir dir;
  class NoCompressors : public FakeCatalog {
    std::vector<laconic::ComponentInfo> infos(const std::string& kind) const override {
      if (kind == "compressor") return {};
      return FakeCatalog::infos(kind);
    }
  } without;
  const std::string path = dir.write("req.lua", "experiment { name = 'r' }\n");
  CHECK(load_error(path, without) == path +
                                         ":1: experiment field 'compressor' is required: the catalog has no default "
                                         "compressor 'none'");
}

TEST_CASE("a component may be a field of another, and names its run as written", "[lua][sweep]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("chain.lua", R"(
experiment {
  name = "chain",
  compressor = sweep { chain { first = topk { ratio = 0.5 } }, chain() },
}
)"),
                                    catalog);
  REQUIRE(plan.runs.size() == 2);
  CHECK(plan.runs[0].name == "compressor=chain,first=topk{ratio=0.5},seed=1");
  CHECK(plan.runs[1].name == "compressor=chain,seed=1");
  const ComponentSpec& first = plan.runs[0].compressor.component("first");
  CHECK(first.kind == "compressor");
  CHECK(first.name == "topk");
  CHECK(first.number("ratio") == 0.5);
  CHECK(plan.runs[1].compressor.component("first").name == "topk");  // the default

  const std::string bad = dir.write("bad.lua",
                                    "experiment { name = 'b',\n"
                                    "  compressor = chain { first = {} } }\n");
  CHECK(load_error(bad, catalog)
            .find("bad.lua:2: chain.first must be a compressor component, "
                  "got a table") != std::string::npos);
}

TEST_CASE("functions given for lr_schedule and on_epoch_end stay callable for the workers", "[lua][callbacks]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("cb.lua", R"(
local base = 0.1
experiment {
  name = "cb",
  lr_schedule = function(epoch, step) return base * 0.5 ^ epoch + step * 0 end,
  on_epoch_end = function(ctx)
    return ctx.test_accuracy > 0.8 or ctx.epoch >= 3
  end,
}
)");
  auto loaded = laconic::lua::load_experiment_with_callbacks(path, catalog);
  REQUIRE(loaded.plan.runs.size() == 1);
  CHECK(loaded.plan.callbacks == std::vector<std::string>{"lr_schedule", "on_epoch_end"});
  CHECK(loaded.plan.runs[0].lr_schedule.name == "lua_function");
  auto& cb = *loaded.callbacks;
  CHECK(cb.has("lr_schedule"));
  CHECK(cb.learning_rate(0, 0) == Approx(0.1));
  CHECK(cb.learning_rate(2, 100) == Approx(0.025));
  CHECK_FALSE(cb.on_epoch_end(0, {{"test_accuracy", 0.5}}));
  CHECK(cb.on_epoch_end(1, {{"test_accuracy", 0.9}}));
  CHECK(cb.on_epoch_end(3, {{"test_accuracy", 0.1}}));
  // A plain load knows the names too, without keeping the state.
  CHECK(load_experiment(path, catalog).callbacks.size() == 2);
}

TEST_CASE(
    "a function given to a per-step field stands in the run as its file:line and stays "
    "callable",
    "[lua][callbacks]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("steps.lua", R"(local shrink = function(epoch, step)
  return 0.1 * 0.5 ^ epoch + step * 0
end
experiment {
  name = "steps",
  compressor = sweep { topk { ratio = shrink }, topk { ratio = function(e, s) return 0.01 end },
                       chain { first = topk { ratio = shrink } } },
}
)");
  auto loaded = laconic::lua::load_experiment_with_callbacks(path, catalog);
  REQUIRE(loaded.plan.runs.size() == 3);
  const auto& runs = loaded.plan.runs;
  // The same function object keeps its id wherever it is given.
  CHECK(runs[0].compressor.fields.at("ratio") == laconic::Value{laconic::StepFunction{"steps.lua:1"}});
  CHECK(runs[1].compressor.fields.at("ratio") == laconic::Value{laconic::StepFunction{"steps.lua:6"}});
  CHECK(runs[2].compressor.component("first").fields.at("ratio") ==
        laconic::Value{laconic::StepFunction{"steps.lua:1"}});
  CHECK(runs[0].name == "compressor=topk,ratio=function@steps.lua:1,seed=1");
  auto& cb = *loaded.callbacks;
  CHECK(cb.step_function("steps.lua:1", 0, 0) == Approx(0.1));
  CHECK(cb.step_function("steps.lua:1", 2, 50) == Approx(0.025));
  CHECK(cb.step_function("steps.lua:6", 7, 7) == Approx(0.01));
  // It survives the run's JSON, as the workers receive it.
  const auto again = laconic::RunConfig::from_json(runs[1].to_json());
  CHECK(again.compressor.fields.at("ratio") == laconic::Value{laconic::StepFunction{"steps.lua:6"}});

  // Two functions on one line get distinct ids; a field that is not per step refuses one.
  const std::string two = dir.write("two.lua",
                                    "experiment { name = 't', compressor = sweep { "
                                    "topk { ratio = function() return 0.1 end }, "
                                    "topk { ratio = function() return 0.2 end } } }\n");
  auto both = laconic::lua::load_experiment_with_callbacks(two, catalog);
  CHECK(both.plan.runs[1].compressor.fields.at("ratio") == laconic::Value{laconic::StepFunction{"two.lua:1#2"}});
  CHECK(both.callbacks->step_function("two.lua:1#2", 0, 0) == Approx(0.2));
  const std::string flag = dir.write("flag.lua",
                                     "experiment { name = 'f',\n  compressor = topk "
                                     "{ error_feedback = function() return true end } }\n");
  CHECK(load_error(flag, catalog) == flag + ":2: topk.error_feedback must be a bool, got a function");
  const std::string builtin = dir.write("builtin.lua",
                                        "experiment { name = 'b',\n  compressor = "
                                        "topk { ratio = math.sin } }\n");
  CHECK(load_error(builtin, catalog)
            .find("builtin.lua:2: a per-step field takes a function "
                  "written in the file") != std::string::npos);
  const std::string text = dir.write("text.lua",
                                     "experiment { name = 'x', compressor = topk { "
                                     "ratio = function() return 'a' end } }\n");
  auto bad = laconic::lua::load_experiment_with_callbacks(text, catalog);
  CHECK_THROWS_WITH(bad.callbacks->step_function("text.lua:1", 0, 3),
                    "the function at text.lua:1 called with (0, 3) must return a number, got "
                    "string");
}

TEST_CASE("errors inside a callback point at its line; bad values are named", "[lua][callbacks]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("bad.lua",
                                     "experiment {\n  name = 'b',\n"
                                     "  lr_schedule = function(e, s)\n"
                                     "    if e > 0 then error('no lr after epoch 0') end\n"
                                     "    return e == 0 and 0.1 or 'x'\n  end,\n"
                                     "  on_epoch_end = function(ctx) return ctx.missing.field end,\n}\n");
  auto loaded = laconic::lua::load_experiment_with_callbacks(path, catalog);
  CHECK(loaded.callbacks->learning_rate(0, 0) == Approx(0.1));
  CHECK_THROWS_WITH(loaded.callbacks->learning_rate(1, 0),
                    Catch::StartsWith(path + ":4:") && Catch::Contains("no lr after epoch 0"));
  CHECK_THROWS_WITH(loaded.callbacks->on_epoch_end(0, {}), Catch::StartsWith(path + ":7:"));
  const std::string wrong = dir.write("wrong.lua", "experiment { name = 'w', on_epoch_end = 3 }\n");
  CHECK(load_error(wrong, catalog) ==
        wrong +
            ":1: experiment field 'on_epoch_end' must be a function(ctx) returning true to "
            "stop, got a number");
}

TEST_CASE("repeats = N runs every combination with seeds 1..N", "[lua][sweep]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("r.lua",
                                              "experiment { name = 'r', compressor = sweep { none(), topk() },\n"
                                              "  repeats = 3 }\n"),
                                    catalog);
  REQUIRE(plan.runs.size() == 6);
  CHECK(plan.runs[0].name == "compressor=none,seed=1");
  CHECK(plan.runs[2].name == "compressor=none,seed=3");
  CHECK(plan.runs[5].seed == 3);
  const auto both = dir.write("b.lua", "experiment { name = 'b', seeds = { 1 }, repeats = 2 }\n");
  CHECK(load_error(both, catalog) == both + ":1: give either seeds = { ... } or repeats = N, not both");
  const auto zero = dir.write("z.lua", "experiment { name = 'z', repeats = 0 }\n");
  CHECK(load_error(zero, catalog) == zero + ":1: experiment field 'repeats' must be an int >= 1, got int 0");
}

TEST_CASE("include runs a file relative to the experiment and returns its values", "[lua][include]") {
  TempDir dir;
  FakeCatalog catalog;
  dir.write("base.lua", "return { optimizer = sgd { lr = 0.2 }, batch_size = 16 }\n");
  const std::string path = dir.write("derived.lua", R"(
local base = include "base.lua"
experiment {
  name = "derived",
  optimizer = base.optimizer,
  batch_size = base.batch_size * 2,
}
)");
  const auto plan = load_experiment(path, catalog);
  REQUIRE(plan.runs.size() == 1);
  CHECK(plan.runs[0].optimizer.number("lr") == 0.2);
  CHECK(plan.runs[0].batch_size == 32);
  // The included file is part of the experiment's hash.
  dir.write("base.lua", "return { optimizer = sgd { lr = 0.3 }, batch_size = 16 }\n");
  CHECK(load_experiment(path, catalog).file_hash != plan.file_hash);

  dir.write("broken.lua", "local x = 1\nreturn x + nil\n");
  const std::string uses = dir.write("uses.lua", "local b = include 'broken.lua'\n");
  CHECK_THAT(load_error(uses, catalog), Catch::Contains("broken.lua:2:"));
  const std::string missing = dir.write("missing.lua", "include 'nope.lua'\n");
  CHECK_THAT(load_error(missing, catalog),
             Catch::StartsWith(missing + ":1: cannot include '") && Catch::Contains("nope.lua"));
  const std::string loop = dir.write("loop.lua", "include 'loop.lua'\n");
  CHECK_THAT(load_error(loop, catalog), Catch::Contains("nests deeper than 8 files"));
  const std::string absolute = dir.write("abs.lua", "include '/etc/passwd'\n");
  CHECK_THAT(load_error(absolute, catalog), Catch::Contains("needs a path relative"));
}

TEST_CASE("override derives an experiment from a base table without changing the base", "[lua][include]") {
  TempDir dir;
  FakeCatalog catalog;
  dir.write("base.lua", "return { name = 'base', batch_size = 16, optimizer = sgd { lr = 0.2 } }\n");
  const std::string path = dir.write("derived.lua", R"(
local base = include "base.lua"
local derived = override(base, { name = "derived", batch_size = 64 })
assert(base.batch_size == 16 and base.name == "base")
experiment(derived)
)");
  const auto plan = load_experiment(path, catalog);
  CHECK(plan.name == "derived");
  REQUIRE(plan.runs.size() == 1);
  CHECK(plan.runs[0].batch_size == 64);
  CHECK(plan.runs[0].optimizer.number("lr") == 0.2);
  const std::string bad = dir.write("bad.lua", "local t = override(3, {})\n");
  CHECK_THAT(load_error(bad, catalog), Catch::StartsWith(bad + ":1:") && Catch::Contains("table expected"));
}

TEST_CASE("a list-of-ints field reaches the run's configuration and its name", "[lua][list]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("mlp.lua", R"(experiment {
  name  = "mlp",
  model = sweep { mlp { sizes = {784, 392, 50, 10} }, mlp {} },
}
)"),
                                    catalog);
  REQUIRE(plan.runs.size() == 2);
  CHECK(plan.runs[0].model.integers("sizes") == std::vector<std::int64_t>{784, 392, 50, 10});
  CHECK(plan.runs[1].model.integers("sizes") == std::vector<std::int64_t>{784, 10});
  CHECK(plan.runs[0].name == "model=mlp,sizes={784,392,50,10},seed=1");
}
