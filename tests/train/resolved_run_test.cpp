// The run resolved once (EngineCatalog::resolve_run): its ranks, where they live, and what its
// compressor is as the built compressor declares it, whatever its name; and the run fact's JSON
// read back as written.
#include "engine/catalog.hpp"
#include "engine/core/resolved_run.hpp"

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
  CHECK_FALSE(ring.thread_ranks);
  const ResolvedRun server = catalog.resolve_run(run_with(catalog, none, {"topology", "parameter_server", {}}));
  CHECK(server.world_size == 4);
  const ResolvedRun threads =
      catalog.resolve_run(run_with(catalog, none, {"topology", "allreduce", {}}, {"placement", "threads", {}}));
  CHECK(threads.thread_ranks);
}

TEST_CASE("the resolved run's fact reads back as written, and a fact of another version is not read", "[resolved]") {
  ResolvedRun run;
  run.workers = 4;
  run.world_size = 5;
  run.thread_ranks = true;
  run.compressor = {.full_precision = false, .summable = true, .fixed_size = true, .multi_round = false};
  const auto back = ResolvedRun::from_json(run.to_json());
  REQUIRE(back);
  CHECK(*back == run);
  std::string other = run.to_json();
  other.replace(other.find("\"version\":1"), 11, "\"version\":2");
  CHECK_FALSE(ResolvedRun::from_json(other));
  CHECK_FALSE(ResolvedRun::from_json("not json"));
  CHECK_FALSE(ResolvedRun::from_json("{\"version\":1}"));
}

TEST_CASE("the catalog finds each kind by its registry's own name, and names them all for another", "[catalog]") {
  const engine::EngineCatalog catalog;
  const std::vector<std::string> kinds = catalog.kinds();
  CHECK(kinds == std::vector<std::string>{"dataset", "model", "optimizer", "topology", "schedule", "compressor",
                                          "network", "lr_schedule", "stopping", "placement", "hardware"});
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
