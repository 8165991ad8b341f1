// The churn schedules on their own (engine/train/churn.cpp): the table form's changes made into
// one script, and random churn's draws against their promise (the leave rate and the mean
// downtime) and against themselves (the same seed, the same changes, however far one asks).
#include <cmath>

#include "engine/catalog.hpp"
#include "engine/train/churn.hpp"

#include <catch2/catch.hpp>

using namespace laconic;
using namespace laconic::train;

namespace {

ComponentSpec change(const std::string& name, std::vector<std::int64_t> ranks, std::int64_t step) {
  return ComponentSpec{"churn", name, {{"ranks", Value{std::move(ranks)}}, {"step", Value{step}}}};
}

RandomChurn random_churn(double leave_rate, double mean_downtime, std::int64_t seed) {
  return RandomChurn(RandomChurnOptions{leave_rate, mean_downtime, seed});
}

}  // namespace

TEST_CASE("a list of leave and join changes is the script of them in step order", "[churn]") {
  const engine::EngineCatalog catalog;
  const ComponentSpec script =
      catalog.combine("churn", {change("join", {3, 2}, 8), change("leave", {2}, 4), change("leave", {3}, 4)});
  CHECK(script.name == "script");
  CHECK(script.text("events") == "leave 2 at 4; leave 3 at 4; join 3,2 at 8");
  CHECK(parse_churn_events("e", script.text("events")).size() == 3);
  // A join's state, "fresh", is written after its step and read back.
  ComponentSpec fresh = change("join", {3}, 8);
  fresh.fields["state"] = Value{std::string("fresh")};
  const ComponentSpec with_state = catalog.combine("churn", {change("leave", {3}, 4), fresh});
  CHECK(with_state.text("events") == "leave 3 at 4; join 3 at 8 fresh");
  const auto read = parse_churn_events("e", with_state.text("events"));
  CHECK(read.back().state == JoinState::Fresh);
  CHECK(read.front().state == JoinState::Copied);
  CHECK_THROWS_WITH(parse_churn_events("e", "leave 3 at 4 fresh"), Catch::Contains("a join may end in"));
  CHECK_THROWS_WITH(catalog.combine("churn", {}), Catch::Contains("lists no change"));
  CHECK_THROWS_WITH(catalog.combine("churn", {ComponentSpec{"churn", "calm", {}}}), Catch::Contains("got churn calm"));
  CHECK_THROWS_WITH(catalog.combine("compressor", {ComponentSpec{"compressor", "topk", {}}}),
                    Catch::Contains("a compressor is one component, not a list"));
}

TEST_CASE("random churn leaves at its rate and stays away its mean downtime, the same on every ask", "[churn]") {
  const std::int64_t workers = 5, steps = 20000;
  const RandomChurn churn = random_churn(0.02, 10, 7);
  const auto& events = churn.events_through(steps, workers);
  // Walk the changes: every leave of a present rank, every join of an absent one, worker 0 stays.
  std::vector<std::int64_t> left_at(workers, -1);
  double present_steps = 0, leaves = 0, downtime = 0, returns = 0;
  std::int64_t last = 0;
  std::int64_t present = workers - 1;  // ranks 1..4
  for (const ChurnEvent& e : events) {
    REQUIRE(e.step >= last);
    if (e.step > steps) break;
    present_steps += static_cast<double>(present) * static_cast<double>(e.step - last);
    last = e.step;
    for (int r : e.ranks) {
      REQUIRE(r > 0);
      REQUIRE((left_at[r] >= 0) == e.join);
      if (e.join) {
        downtime += static_cast<double>(e.step - left_at[r]);
        ++returns;
        left_at[r] = -1;
        ++present;
      } else {
        left_at[r] = e.step;
        ++leaves;
        --present;
      }
    }
  }
  // A leave is a Bernoulli(0.02) per present rank and step: about 20000 x 4 x 0.02 x 1/(1 + 0.2)
  // ~ 1300 of them; 4 standard errors of the rate and of the geometric mean (sd ~ 9.5).
  const double rate = leaves / present_steps;
  CHECK(leaves > 1000);
  CHECK(std::abs(rate - 0.02) < 4 * std::sqrt(0.02 * 0.98 / present_steps));
  CHECK(std::abs(downtime / returns - 10) < 4 * 9.5 / std::sqrt(returns));
  // Drawn step by step or all at once, by another object of the same seed: the same changes.
  const RandomChurn again = random_churn(0.02, 10, 7);
  for (std::int64_t step = 0; step <= 3000; step += 7) (void)again.events_through(step, workers);
  const auto& first = churn.events();
  const auto& second = again.events_through(3000, workers);
  REQUIRE(second.size() > 10);
  for (std::size_t i = 0; i < second.size() && second[i].step <= 3000; ++i) CHECK(second[i] == first[i]);
  CHECK(again.present(3000, workers) == churn.present(3000, workers));
  // Another seed, other changes.
  CHECK(random_churn(0.02, 10, 8).events_through(3000, workers).front() != first.front());
}

TEST_CASE("random churn of seed 0 takes the run's seed", "[churn]") {
  RunConfig config;
  config.churn = ComponentSpec{"churn", "random", {{"seed", Value{std::int64_t{0}}}}};
  config.seed = 42;
  CHECK(engine::EngineCatalog::churn_of_run(config).integer("seed") == 42);
  config.churn.fields["seed"] = Value{std::int64_t{5}};
  CHECK(engine::EngineCatalog::churn_of_run(config).integer("seed") == 5);
}
