// Learning-rate schedules: each factor against its formula, warm-up and linear scaling, and
// the rates a worker really used, as recorded.
#include "engine/train/optim/lr_schedule.hpp"
#include "engine/core/error.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using namespace laconic::train;

namespace {

double factor_at(const ComponentSpec& spec, TrainingClock clock) {
  const auto registry = builtin_lr_schedules();
  const auto resolved = registry.resolve(spec);
  return lr_factor(*registry.create(resolved), resolved, clock);
}

}  // namespace

TEST_CASE("learning-rate schedules follow their formulas", "[train][lr]") {
  const ComponentSpec decay{"lr_schedule", "step_decay", {{"every", std::int64_t{2}}, {"factor", 0.5}}};
  TrainingClock clock{0, 0, 10, 6, 4};
  for (std::int64_t epoch = 0; epoch < 6; ++epoch) {
    clock.epoch = epoch;
    clock.step = epoch * 10;
    CHECK(factor_at(decay, clock) == Approx(std::pow(0.5, epoch / 2)));
  }
  const ComponentSpec cosine{"lr_schedule", "cosine", {{"final", 0.1}}};
  CHECK(factor_at(cosine, {0, 0, 10, 6, 4}) == Approx(1.0));
  CHECK(factor_at(cosine, {59, 5, 10, 6, 4}) == Approx(0.1));
  // Halfway: the mean of the two ends.
  CHECK(factor_at(cosine, {0, 0, 11, 1, 1}) == Approx(1.0));
  CHECK(factor_at(cosine, {5, 0, 11, 1, 1}) == Approx(0.55));

  const ComponentSpec warm{
      "lr_schedule", "constant", {{"warmup_steps", std::int64_t{4}}, {"scale_with_workers", true}}};
  CHECK(factor_at(warm, {0, 0, 10, 1, 4}) == Approx(4 * 0.25));
  CHECK(factor_at(warm, {2, 0, 10, 1, 4}) == Approx(4 * 0.75));
  CHECK(factor_at(warm, {4, 0, 10, 1, 4}) == Approx(4.0));
  CHECK(factor_at({"lr_schedule", "constant", {}}, {7, 0, 10, 1, 4}) == 1.0);

  CHECK_THROWS_WITH(factor_at({"lr_schedule", "step_decay", {{"factor", 1.5}}}, clock),
                    "step_decay.factor must be in (0, 1], got 1.5");
  CHECK_THROWS_WITH(factor_at({"lr_schedule", "cosine", {{"final", -0.5}}}, clock),
                    "cosine.final must be in [0, 1], got -0.5");
}
