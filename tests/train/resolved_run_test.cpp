// The run resolved once (EngineCatalog::resolve_run): its ranks, where they live, and what its
// compressor is as the built compressor declares it, whatever its name; and the run fact's JSON
// read back as written.
#include "engine/catalog.hpp"
#include "engine/core/resolved_run.hpp"

#include <nlohmann/json.hpp>

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;

namespace {

RunConfig run_with(const engine::EngineCatalog& catalog, const ComponentSpec& compressor,
                   const ComponentSpec& topology = {"topology", "allreduce", {}},
                   const ComponentSpec& placement = {"placement", "processes", {}}) {
  RunConfig run;
  run.dataset = catalog.resolve({"dataset", "synthetic", {{"shape", std::vector<std::int64_t>{1, 8, 8}}}});
  run.model = catalog.resolve({"model", "mlp", {{"sizes", std::vector<std::int64_t>{64, 32, 10}}}});
  run.optimizer = catalog.resolve({"optimizer", "sgd", {}});
  run.topology = catalog.resolve(topology);
  run.schedule = catalog.resolve({"schedule", "synchronous", {}});
  run.compressor = catalog.resolve(compressor);
  run.placement = catalog.resolve(placement);
  run.workers = 3;
  return run;
}

}  // namespace

TEST_CASE("a run's compressor is resolved by what it declares, not by its name", "[resolved]") {
  const engine::EngineCatalog catalog;
  const ResolvedCompressor none = catalog.resolve_run(run_with(catalog, {"compressor", "none", {}})).compressor;
  CHECK(none.full_precision);
  CHECK(none.summable);
  CHECK_FALSE(none.multi_round);
  for (const char* name : {"fp16", "bf16"}) {
    INFO(name);
    const ResolvedCompressor half = catalog.resolve_run(run_with(catalog, {"compressor", name, {}})).compressor;
    CHECK_FALSE(half.full_precision);  // judged like any compressor: it rounds the gradient
    CHECK(half.fixed_size);
  }
  const ResolvedCompressor topk =
      catalog.resolve_run(run_with(catalog, {"compressor", "topk", {{"ratio", 0.01}}})).compressor;
  CHECK_FALSE(topk.full_precision);
  CHECK_FALSE(topk.summable);
  CHECK_FALSE(topk.fixed_size);
  const ResolvedCompressor powersgd = catalog.resolve_run(run_with(catalog, {"compressor", "powersgd", {}})).compressor;
  CHECK(powersgd.multi_round);
  CHECK_FALSE(powersgd.full_precision);
}

TEST_CASE("a run's ranks are resolved once: servers beyond the workers, threads or processes", "[resolved]") {
  const engine::EngineCatalog catalog;
  const ComponentSpec none{"compressor", "none", {}};
  const ResolvedRun ring = catalog.resolve_run(run_with(catalog, none));
  CHECK(ring.workers == 3);
  CHECK(ring.world_size == 3);
  CHECK(ring.placement == RankPlacement::Processes);
  const ResolvedRun server = catalog.resolve_run(run_with(catalog, none, {"topology", "parameter_server", {}}));
  CHECK(server.world_size == 4);
  const ResolvedRun threads =
      catalog.resolve_run(run_with(catalog, none, {"topology", "allreduce", {}}, {"placement", "threads", {}}));
  CHECK(threads.placement == RankPlacement::Threads);
}

TEST_CASE("a run's link, hardware, test metric and configuration are resolved from what its components declare",
          "[resolved]") {
  const engine::EngineCatalog catalog;
  RunConfig run = run_with(catalog, {"compressor", "none", {}});
  run.experiment = "e";
  run.network = catalog.resolve({"network", "link", {{"bandwidth", std::string("100Mbit")}, {"latency", std::string("2ms")}}});
  run.swept = {{"compressor", Value(std::string("none"))}, {kSeedVariable, Value(std::int64_t{3})}};
  const ResolvedRun resolved = catalog.resolve_run(run);
  REQUIRE(resolved.link);
  CHECK(resolved.link->bits_per_second == Approx(1e8));
  CHECK(resolved.link->latency_seconds == Approx(2e-3));
  CHECK_FALSE(resolved.link_emulated);
  CHECK_FALSE(resolved.hardware);  // measured()
  CHECK(resolved.test_metric == ResolvedMetric{"test_accuracy", true, "test"});
  CHECK(resolved.model_parameters == 64 * 32 + 32 + 32 * 10 + 10);  // the mlp of run_with
  // The configuration is the run less its seed: another seed repeats it, another field does not.
  RunConfig other_seed = run;
  other_seed.swept[kSeedVariable] = Value(std::int64_t{4});
  CHECK(catalog.resolve_run(other_seed).configuration == resolved.configuration);
  RunConfig other_field = run;
  other_field.swept["compressor"] = Value(std::string("fp16"));
  CHECK(catalog.resolve_run(other_field).configuration != resolved.configuration);
  run.hardware = catalog.resolve(
      {"hardware", "by_hand", {{"label", std::string("A100")}, {"forward", std::string("3ms")}, {"backward", std::string("6ms")}}});
  const ResolvedRun by_hand = catalog.resolve_run(run);
  REQUIRE(by_hand.hardware);
  CHECK(by_hand.hardware->name == "A100");
  REQUIRE(by_hand.hardware->models.size() == 1);
  CHECK(by_hand.hardware->models[0].forward == Approx(3e-3));
}

TEST_CASE("the resolved run's fact reads back as written, and a fact of another version is not read", "[resolved]") {
  ResolvedRun run;
  run.workers = 4;
  run.world_size = 5;
  run.placement = RankPlacement::Threads;
  run.compressor = {
      .full_precision = false, .summable = false, .fixed_size = true, .multi_round = false, .summed_in_transit = "fp16"};
  run.link = parse_link("10Gbit,50us,300us,3Gbit");
  run.link->trace = {{60, 1e9, std::nullopt}, {120, 1e10, 1e-4}};  // a link that changes keeps its changes
  run.link_emulated = true;
  run.islands = ResolvedIslands{{2, 2}, parse_link("10Gbit,10us"), parse_link("100Mbit,1ms"), true};
  HardwareProfile hardware;
  hardware.name = "by hand";
  hardware.origin = "by_hand { ... }";
  hardware.models.push_back({"", 0, 0, 1e-3, 2e-3, 3e-4, {{1e-4, 100}}});
  hardware.compressors["topk"] = {{1e-5, 2e-9}, {3e-6, 1e-9}};
  run.hardware = hardware;
  run.test_metric = {"test_perplexity", false, "validation"};
  run.model_parameters = 1298880;
  run.configuration = "e\n{\"compressor\":\"none\"}";
  run.device = "cuda:1";
  run.codecs_on = "cpu";
  const auto back = ResolvedRun::from_json(run.to_json());
  REQUIRE(back);
  CHECK(*back == run);
  std::string other = run.to_json();
  other.replace(other.find("\"version\":2"), 11, "\"version\":1");
  CHECK_FALSE(ResolvedRun::from_json(other));
  CHECK_FALSE(ResolvedRun::from_json("not json"));
  CHECK_FALSE(ResolvedRun::from_json("{\"version\":2}"));
}

TEST_CASE("the catalog finds each kind by its registry's own name, and names them all for another", "[catalog]") {
  const engine::EngineCatalog catalog;
  const std::vector<std::string> kinds = catalog.kinds();
  CHECK(kinds == std::vector<std::string>{"dataset", "model", "optimizer", "topology", "schedule", "compressor",
                                          "network", "lr_schedule", "stopping", "placement", "hardware", "churn", "device"});
  for (const std::string& kind : kinds) {
    INFO(kind);
    const auto infos = catalog.infos(kind);
    REQUIRE_FALSE(infos.empty());
    CHECK(infos.front().kind == kind);
  }
  CHECK_THROWS_WITH(catalog.infos("colour"), Catch::Contains("unknown component kind 'colour'") &&
                                                 Catch::Contains("placement, hardware"));
  CHECK_THROWS_WITH(catalog.resolve({"colour", "red", {}}), Catch::Contains("known: dataset, model"));
}

TEST_CASE("a resolved fact recorded before the split and the parameter count reads them as test and 0", "[resolved]") {
  ResolvedRun run;
  run.workers = 2;
  run.world_size = 2;
  run.test_metric = {"test_accuracy", true, "test"};
  nlohmann::json older = nlohmann::json::parse(run.to_json());
  older.erase("model_parameters");
  older["test_metric"].erase("split");
  older.erase("device");
  older.erase("codecs_on");
  const auto back = ResolvedRun::from_json(older.dump());
  REQUIRE(back);
  CHECK(back->test_metric.split == "test");
  CHECK(back->model_parameters == 0);
  CHECK(back->device == "cpu");
  CHECK(back->codecs_on == "cpu");
}
