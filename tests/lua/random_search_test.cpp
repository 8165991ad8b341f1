#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "engine/core/error.hpp"
#include "fake_catalog.hpp"
#include "lua/experiment.hpp"

using laconic::Value;
using laconic::lua::load_experiment;
using laconic::lua::testing::FakeCatalog;
using laconic::lua::testing::load_error;
using laconic::lua::testing::TempDir;

namespace {

std::vector<std::string> names(const laconic::lua::ExperimentPlan& plan) {
  std::vector<std::string> out;
  for (const auto& run : plan.runs) out.push_back(run.name);
  return out;
}

}  // namespace

TEST_CASE("a sweep inside a constructor sweeps that field of the component, crossed or paired",
          "[lua][sweep][nested]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto crossed = load_experiment(dir.write("crossed.lua", R"(
experiment {
  name = "n",
  optimizer = sgd { lr = sweep { 0.1, 0.01 }, momentum = 0.9 },
  compressor = sweep { none(), topk { ratio = 0.05 } },
}
)"),
                                       catalog);
  CHECK(names(crossed) == std::vector<std::string>{"compressor=none,lr=0.1,seed=1", "compressor=none,lr=0.01,seed=1",
                                                   "compressor=topk,ratio=0.05,lr=0.1,seed=1",
                                                   "compressor=topk,ratio=0.05,lr=0.01,seed=1"});
  CHECK(crossed.runs[1].optimizer.number("lr") == 0.01);
  CHECK(crossed.runs[1].optimizer.number("momentum") == 0.9);
  CHECK(crossed.runs[1].swept.at("optimizer.lr") == Value{0.01});
  CHECK_FALSE(crossed.runs[1].swept.count("optimizer.momentum"));

  // Per-method learning rates: the inner sweep pairs with the experiment's sweep of its group.
  const auto paired = load_experiment(dir.write("paired.lua", R"(
experiment {
  name = "p",
  optimizer = sgd { lr = sweep { 0.1, 0.03, group = "method" } },
  compressor = sweep { none(), topk { ratio = 0.05 }, group = "method" },
}
)"),
                                      catalog);
  CHECK(names(paired) ==
        std::vector<std::string>{"compressor=none,lr=0.1,seed=1", "compressor=topk,ratio=0.05,lr=0.03,seed=1"});

  // Nested components: a sweep in the inner one sweeps the outer one.
  const auto chained = load_experiment(dir.write("chain.lua", R"(
experiment { name = "c", compressor = chain { first = topk { ratio = sweep { 0.1, 0.01 } } } }
)"),
                                       catalog);
  CHECK(names(chained) == std::vector<std::string>{"first=topk{ratio=0.1},seed=1", "first=topk{ratio=0.01},seed=1"});

  // Such a component among a sweep's alternatives contributes each of its own.
  const auto spliced = load_experiment(dir.write("splice.lua", R"(
experiment { name = "s", compressor = sweep { none(), topk { ratio = sweep { 0.1, 0.01 } } } }
)"),
                                       catalog);
  CHECK(names(spliced) == std::vector<std::string>{"compressor=none,seed=1", "compressor=topk,ratio=0.1,seed=1",
                                                   "compressor=topk,ratio=0.01,seed=1"});

  const std::string mixed = dir.write("mixed.lua",
                                      "experiment { name = 'm',\n  optimizer = sgd "
                                      "{ lr = sweep { 0.1, 0.2, group = 'a' }, "
                                      "momentum = sweep { 0, 0.9 } } }\n");
  CHECK(load_error(mixed, catalog) ==
        mixed +
            ":2: the sweeps inside one sgd { ... } must all be paired in one group or all "
            "ungrouped; 'lr' has group 'a', 'momentum' has ''");
}

TEST_CASE(
    "random search draws n distinct joint samples, the same for every grid combination "
    "and every load",
    "[lua][random]") {
  TempDir dir;
  FakeCatalog catalog;
  const std::string path = dir.write("random.lua", R"(
experiment {
  name = "r",
  optimizer = sgd { lr = log_uniform(1e-3, 1e-1), momentum = 0.9 },
  batch_size = int(16, 64),
  compressor = sweep { none(), topk { ratio = 0.05 } },
  random = { n = 5, seed = 3 },
}
)");
  const auto plan = load_experiment(path, catalog);
  REQUIRE(plan.runs.size() == 10);
  std::set<std::string> samples;
  // The samples are one axis, at the place of the first drawn field (batch_size).
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& a = plan.runs[2 * i];      // compressor = none
    const auto& b = plan.runs[2 * i + 1];  // compressor = topk, the same sample
    CHECK(a.compressor.name == "none");
    CHECK(b.compressor.name == "topk");
    const double lr = a.optimizer.number("lr");
    CHECK(lr >= 1e-3);
    CHECK(lr <= 1e-1);
    CHECK(std::stod(laconic::format_value(Value{lr})) == lr);
    CHECK(a.optimizer.number("momentum") == 0.9);
    CHECK(a.batch_size >= 16);
    CHECK(a.batch_size <= 64);
    CHECK(b.optimizer.number("lr") == lr);
    CHECK(b.batch_size == a.batch_size);
    CHECK(a.swept.at("optimizer.lr") == Value{lr});
    samples.insert(a.name);
  }
  CHECK(samples.size() == 5);
  CHECK(plan.runs[0].name.find("batch_size=") != std::string::npos);
  CHECK(plan.runs[0].name.find(",lr=") != std::string::npos);
  // Workers load the file again and must get the very same runs.
  CHECK(names(load_experiment(path, catalog)) == names(plan));
  const std::string other = dir.write("other.lua", R"(
experiment { name = "r", optimizer = sgd { lr = log_uniform(1e-3, 1e-1) }, random = { n = 5, seed = 4 } }
)");
  CHECK(load_experiment(other, catalog).runs[0].optimizer.number("lr") != plan.runs[0].optimizer.number("lr"));
}

TEST_CASE(
    "log_uniform is uniform in the logarithm, int covers its inclusive range, choice "
    "picks its values",
    "[lua][random]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("stats.lua", R"(
experiment {
  name = "s",
  optimizer = sgd { lr = log_uniform(1e-3, 1e-1), momentum = uniform(0, 1) },
  batch_size = int(1, 4),
  random = { n = 400 },
}
)"),
                                    catalog);
  REQUIRE(plan.runs.size() == 400);
  double log_sum = 0, momentum_sum = 0;
  std::map<std::int64_t, int> sizes;
  for (const auto& run : plan.runs) {
    log_sum += std::log10(run.optimizer.number("lr"));
    momentum_sum += run.optimizer.number("momentum");
    ++sizes[run.batch_size];
  }
  // log10(lr) ~ U(-3, -1): mean -2, standard error 0.577 / sqrt(400) = 0.029; 5 of them.
  CHECK(log_sum / 400 == Approx(-2).margin(0.15));
  CHECK(momentum_sum / 400 == Approx(0.5).margin(0.075));
  // 100 expected per value, standard deviation 8.7.
  REQUIRE(sizes.size() == 4);
  for (const auto& [size, count] : sizes) {
    CHECK(size >= 1);
    CHECK(size <= 4);
    CHECK(count > 60);
  }

  const auto picked = load_experiment(dir.write("choice.lua", R"(
experiment { name = "c", batch_size = choice { 32, 64 }, random = { n = 2 } }
)"),
                                      catalog);
  std::set<std::int64_t> chosen;
  for (const auto& run : picked.runs) chosen.insert(run.batch_size);
  CHECK(chosen == std::set<std::int64_t>{32, 64});
}

TEST_CASE("random search mistakes name the distribution, the field and the line", "[lua][random]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    const std::string e = load_error(path, catalog);
    REQUIRE(e.rfind(path, 0) == 0);
    return e.substr(path.size());
  };
  CHECK(error_of("no_n.lua", "experiment { name = 'x',\n  batch_size = int(16, 64) }\n") ==
        ":1: the experiment draws values from int(16, 64); say how many samples with random = "
        "{ n = 8 }");
  CHECK(error_of("no_dist.lua", "experiment { name = 'x', random = { n = 3 } }\n") ==
        ":1: random = { n = ... } and tune = { trials = ... } need distributions to draw from: "
        "write uniform(a, b), "
        "log_uniform(a, b), int(a, b) or choice { ... } where a value goes");
  CHECK(error_of("few.lua",
                 "experiment { name = 'x', batch_size = choice { 32, 64 },\n"
                 "  random = { n = 3 } }\n") ==
        ":1: random = { n = 3 } asks for more distinct samples than the distributions give "
        "(found 2)");
  CHECK(error_of("log.lua", "local lr = log_uniform(0, 1)\n") == ":1: log_uniform(low, high) needs low > 0, got 0");
  CHECK(error_of("int.lua", "experiment { name = 'x',\n  batch_size = int(1.5, 4) }\n") ==
        ":2: int(low, high) takes integer bounds, got (1.5, 4)");
  CHECK(error_of("type.lua",
                 "experiment { name = 'x',\n  batch_size = uniform(16, 64),\n"
                 "  random = { n = 2 } }\n") ==
        ":1: experiment field 'batch_size' (random sample) must be an int >= 1, got number "
        "34.34");
  CHECK(error_of("field.lua",
                 "experiment { name = 'x',\n  optimizer = sgd { lr = choice { "
                 "'fast', 'slow' } },\n  random = { n = 2 } }\n") ==
        ":2: sgd.lr must be a number, got string \"fast\"");
  CHECK(error_of("bad_random.lua", "experiment { name = 'x', random = { samples = 3 } }\n") ==
        ":1: random takes n and seed, got 'samples'");
}

TEST_CASE("where(run) skips the combinations it returns false for", "[lua][random][where]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("where.lua", R"(
experiment {
  name = "w",
  compressor = sweep { none(), topk { ratio = 0.1 }, topk { ratio = 0.01 } },
  batch_size = sweep { 32, 64 },
  where = function(run)
    return not (run.compressor == "topk" and run["compressor.ratio"] < 0.05 and run.batch_size > 32)
  end,
}
)"),
                                    catalog);
  CHECK(plan.runs.size() == 5);
  CHECK(plan.skipped == 1);
  for (const auto& run : plan.runs) CHECK(run.name != "batch_size=64,compressor=topk,ratio=0.01,seed=1");
  const std::string none = dir.write("none.lua",
                                     "experiment { name = 'n', where = function() "
                                     "return false end }\n");
  CHECK(load_error(none, catalog) == none + ": where(run) rejected all 1 runs");
}

TEST_CASE("tune draws its trials like random search and tells the controller what to compare", "[lua][random][tune]") {
  TempDir dir;
  FakeCatalog catalog;
  const auto plan = load_experiment(dir.write("tune.lua", R"(
experiment {
  name = "t",
  optimizer = sgd { lr = log_uniform(1e-3, 1e-1) },
  batch_size = int(16, 64),
  compressor = sweep { none(), topk { ratio = 0.1 } },
  tune = { trials = 3, metric = "test_loss", goal = "min" },
  seeds = { 1, 2 },
}
)"),
                                    catalog);
  REQUIRE(plan.tune);
  CHECK(plan.tune->trials == 3);
  CHECK(plan.tune->metric == "test_loss");
  CHECK(plan.tune->goal == laconic::Goal::Min);
  CHECK(plan.tune->drawn == std::vector<std::string>{"batch_size", "optimizer.lr"});
  CHECK(plan.runs.size() == 12);  // every trial on every seed; the controller picks
  CHECK_FALSE(load_experiment(dir.write("plain.lua", "experiment { name = 'p' }\n"), catalog).tune);
  const auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    return load_error(path, catalog).substr(path.size());
  };
  CHECK(error_of("both.lua",
                 "experiment { name = 'x', batch_size = int(1, 9),\n random = { n = 2 }, "
                 "tune = { trials = 2 } }\n") == ":1: give either random = { ... } or tune = { ... }, not both");
  CHECK(error_of("goal.lua",
                 "experiment { name = 'x', batch_size = int(1, 9), tune = { trials = 2, "
                 "goal = 'up' } }\n") == ":1: tune.goal must be \"max\" or \"min\", got string \"up\"");
}
