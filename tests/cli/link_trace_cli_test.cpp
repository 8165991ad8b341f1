// link { trace = "bw.csv" } end to end: thread ranks project every step at the rate the trace
// gives at the step's start on their clock, and on an emulated link (as root) tc changes the
// shaping on schedule, so the measured exchange slows while the link is slow and recovers after.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "cli_harness.hpp"
#include "controller/emulated_network.hpp"
#include "engine/comm/link_trace.hpp"
#include "skip.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/run_facts.hpp"

using namespace laconic;
using namespace laconic::testing;

namespace {

struct TracedStep {
  double wall = 0, time_step = 0, messages = 0, link_bytes = 0, projected = 0, communicate = 0;
};

// Worker 0's steps of run 1.
std::map<std::int64_t, TracedStep> steps_of(const std::string& db_path) {
  auto db = storage::Database::open_read_only(db_path);
  std::map<std::int64_t, TracedStep> steps;
  const auto read = [&](const char* key, double TracedStep::*field) {
    for (const auto& m : storage::metrics_of(*db, 1, key))
      if (m.worker == 0) {
        steps[m.step].*field = m.value;
        steps[m.step].wall = m.wall_time;
      }
  };
  read("time_step", &TracedStep::time_step);
  read("messages", &TracedStep::messages);
  read("link_bytes", &TracedStep::link_bytes);
  read("projected_time_communicate", &TracedStep::projected);
  read("time_communicate", &TracedStep::communicate);
  return steps;
}

double median(std::vector<double> v) {
  REQUIRE(!v.empty());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("thread ranks project each step at the rate the link's trace gives at its start", "[cli][e2e][trace]") {
  const std::string dir = make_temp_dir();
  write_file(dir + "/bw.csv", "time,bandwidth\n0.01s,10Mbit\n0.3s,1Gbit\n");
  write_file(dir + "/trace.lua",
             "experiment {\n"
             "  name = \"trace\",\n"
             "  data = synthetic { shape = {1, 8, 8}, n = 2048, test_n = 64 },\n"
             "  model = mlp { sizes = {64, 64, 10} },\n"
             "  optimizer = sgd { lr = 0.1 },\n"
             "  batch_size = 16, workers = 2, max_steps = 60, eval_limit = 64, timeout = 30,\n"
             "  network = link { bandwidth = \"1Gbit\", latency = \"50us\", trace = \"bw.csv\" },\n"
             "  placement = threads(),\n"
             "}\n");
  const auto run = run_laconic(dir, "run trace.lua --db t.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  LinkSpec link = parse_link("1Gbit,50us");
  link.trace = comm::read_link_trace(dir + "/bw.csv");
  int slow = 0, fast = 0;
  for (const auto& [step, s] : steps_of(dir + "/t.db")) {
    // A thread rank's row is stamped at its step's end on its derived clock.
    const double start = s.wall - s.time_step;
    INFO("step " << step << " from " << start << " s: " << s.projected << " s projected");
    CHECK(s.projected == Approx(link.project_at(start, s.messages, s.link_bytes)).epsilon(1e-6));
    CHECK(s.communicate == Approx(s.projected));  // a thread rank's communication is the projection
    (start >= 0.01 && start < 0.3 ? slow : fast) += 1;
  }
  CHECK(slow >= 1);
  CHECK(fast >= 1);
}

TEST_CASE("on an emulated link tc follows the trace: the exchange slows while the link is slow",
          "[cli][e2e][emulate][trace][needs-root]") {
  const std::string why = controller::why_no_emulation();
  if (!why.empty()) LACONIC_SKIP("emulated links cannot be built here (" << why << ")");
  const std::string dir = make_temp_dir();
  // A tenth of the link for the first 8 s from the workers' launch, then the link's own rate.
  write_file(dir + "/bw.csv", "0s,10Mbit\n8s,100Mbit\n");
  write_file(dir + "/emulated.lua",
             tiny_experiment("emulated", "  max_steps = 60, batch_size = 64,\n"
                                         "  network = link { bandwidth = \"100Mbit\", latency = \"1ms\", "
                                         "emulate = true, trace = \"bw.csv\" },\n"));
  const auto run = run_laconic(dir, "run emulated.lua --db e.db --quiet", 300);
  INFO(run.out << run.err);
  REQUIRE(run.status == 0);
  auto db = storage::Database::open_read_only(dir + "/e.db");
  const auto facts = storage::facts_of(*db, 1);
  REQUIRE(facts.count("network_trace") == 1);
  INFO("replayed: " << facts.at("network_trace"));
  CHECK_THAT(facts.at("network_trace"), Catch::StartsWith("at 0") && Catch::Contains("s: 100000000 bit/s"));
  CHECK_THAT(facts.at("network_emulation"), Catch::Contains("its trace (2 changes from 0 s to 8 s, 10 to 100 Mbit/s) replayed by tc qdisc change"));
  // A worker's clock starts after the controller's launch, so a step at its 8.5 s ran after the
  // change; its first steps (after the first, which warms up) ran well before it.
  std::vector<double> early, late, early_projected, late_projected;
  for (const auto& [step, s] : steps_of(dir + "/e.db")) {
    if (step >= 1 && step <= 5) early.push_back(s.communicate), early_projected.push_back(s.projected);
    if (s.wall - s.time_step >= 8.5) late.push_back(s.communicate), late_projected.push_back(s.projected);
  }
  REQUIRE(late.size() >= 3);
  INFO("measured medians: " << median(early) << " s at 10 Mbit/s, " << median(late) << " s at 100 Mbit/s");
  // 247 kB each way: about 200 ms at 10 Mbit/s, 20 ms at 100 Mbit/s.
  CHECK(median(early) > 0.15);
  CHECK(median(late) < 0.5 * median(early));
  CHECK(median(early_projected) > 5 * median(late_projected));
}
