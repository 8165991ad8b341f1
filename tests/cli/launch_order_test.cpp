// One launch order for every path a rank starts by (controller/launch_order.hpp): a forked worker gets
// WorkerArgs itself, an exec'd one `laconic worker ARGS` (to_argv, parsed back by
// add_worker_options), a remote rank the relay's order (relay_protocol_test): each reads back the
// same order, and how many processes a run starts follows from its resolved placement alone.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

#include "controller/launch_order.hpp"
#include "controller/worker_args.hpp"

using namespace laconic;
using namespace laconic::controller;

namespace {

LaunchOrder order_of(int world, RankPlacement placement) {
  LaunchOrder order{3, "compressor=topk,seed=1", "launch-9/run-4", {}};
  order.resolved.workers = world;
  order.resolved.world_size = world;
  order.resolved.placement = placement;
  order.resolved.link = parse_link("100Mbit,2ms");
  order.resolved.test_metric = {"test_accuracy", true};
  order.resolved.configuration = "e\n{\"compressor\":\"topk\"}";
  return order;
}

}  // namespace

TEST_CASE("an exec'd worker's arguments read back the launch order a fork is given", "[cli][launch_order]") {
  WorkerArgs sent;
  sent.file = "exp.lua";
  sent.order = order_of(4, RankPlacement::Processes);
  sent.rank = 2;
  sent.store = "/tmp/store";
  sent.overrides = {"epochs=2"};
  const std::vector<std::string> words = sent.to_argv();
  std::vector<const char*> argv{"worker"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  CLI::App app;
  WorkerArgs got;
  add_worker_options(app, got);
  app.parse(static_cast<int>(argv.size()), argv.data());
  CHECK(got.order == sent.order);
  CHECK(got.rank == 2);
  CHECK(got.store == "/tmp/store");
  CHECK(got.overrides == sent.overrides);

  std::vector<const char*> torn{"worker", "--file", "exp.lua", "--rank", "0", "--store", "s", "--order", "{}"};
  CLI::App other;
  WorkerArgs refused;
  add_worker_options(other, refused);
  CHECK_THROWS_AS(other.parse(static_cast<int>(torn.size()), torn.data()), CLI::ValidationError);
}

TEST_CASE("a run's processes follow from its resolved placement", "[cli][launch_order]") {
  const LaunchOrder processes = order_of(5, RankPlacement::Processes);
  CHECK(processes.processes() == 5);
  CHECK(processes.ranks_per_process() == 1);
  const LaunchOrder threads = order_of(16, RankPlacement::Threads);
  CHECK(threads.processes() == 1);
  CHECK(threads.ranks_per_process() == 16);
  const auto back = LaunchOrder::from_json(threads.to_json());
  REQUIRE(back);
  CHECK(*back == threads);
  CHECK_FALSE(LaunchOrder::from_json("not json"));
}
