// Traits asked of the registry without building (world size, staleness bound) and what the
// built topology or schedule says must agree, for every entry and a few settings of each.
#include <catch2/catch.hpp>

#include "engine/schedule/builtin.hpp"
#include "engine/topology/builtin.hpp"

using namespace laconic;

namespace {

// Every entry at its defaults, and the settings that change a trait.
std::vector<ComponentSpec> specs_of(const std::string& kind, const std::vector<ComponentInfo>& infos,
                                    const std::vector<ComponentSpec>& extra) {
  std::vector<ComponentSpec> out;
  for (const auto& info : infos) out.push_back(ComponentSpec{kind, info.name, {}});
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace

TEST_CASE("a topology's traits from its options are what the built topology says", "[topology][traits]") {
  const auto registry = topology::builtin_topologies();
  const auto spec =
      GENERATE_COPY(from_range(specs_of("topology", registry.infos(),
                                        {{"topology", "parameter_server", {{"servers", std::int64_t{3}}}},
                                         {"topology", "parameter_server", {{"pull", std::string("gradients")}}}})));
  INFO(spec.name << " " << spec.to_json().dump());
  const topology::TopologyTraits asked = registry.traits(spec);
  CHECK(registry.create(spec)->traits() == asked);
  if (spec.name == "parameter_server") {
    const auto resolved = registry.resolve(spec);
    CHECK(asked.extra_ranks == resolved.integer("servers"));
    CHECK(asked.pulls_weights == (resolved.text("pull") == "weights"));
    CHECK(asked.serves_asynchronously == (resolved.text("pull") == "weights"));
  } else {
    CHECK(asked.extra_ranks == 0);
    CHECK_FALSE(asked.pulls_weights);
    CHECK_FALSE(asked.serves_asynchronously);
  }
  CHECK(asked.mixes_models == (spec.name == "gossip"));
}

TEST_CASE("a schedule's staleness bound from its options is what the built schedule says", "[topology][traits]") {
  const auto registry = schedule::builtin_schedules();
  const auto spec = GENERATE_COPY(from_range(
      specs_of("schedule", registry.infos(), {{"schedule", "stale_sync", {{"staleness", std::int64_t{0}}}}})));
  INFO(spec.name << " " << spec.to_json().dump());
  const schedule::ScheduleTraits asked = registry.traits(spec);
  CHECK(registry.create(spec)->traits() == asked);
  CHECK(asked.staleness_bound.has_value() == (spec.name == "stale_sync" || spec.name == "async"));
  if (spec.name == "stale_sync") CHECK(asked.staleness_bound == registry.resolve(spec).integer("staleness"));
  CHECK(asked.averages_models == (spec.name == "local_sgd" || spec.name == "diloco"));
  CHECK(asked.outer_optimizer.has_value() == (spec.name == "diloco"));
  if (asked.outer_optimizer) CHECK(*asked.outer_optimizer == registry.resolve(spec).component("outer"));
  CHECK(asked.exchanges_each_gradient == (spec.name == "synchronous"));
}
