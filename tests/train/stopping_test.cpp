// Stopping rules: early stopping counts a streak of epochs without improvement.
#include "engine/train/stopping.hpp"
#include "engine/core/error.hpp"

// Catch2 last: LibTorch's c10 defines a glog-style CHECK that would otherwise replace Catch's.
#include <catch2/catch.hpp>

using namespace laconic;
using namespace laconic::train;

namespace {

/// The epoch after which the rule stops, for a metric series; -1 if it never does.
std::int64_t stops_after(const ComponentSpec& spec, const std::string& metric, const std::vector<double>& series) {
  auto rule = builtin_stop_rules().create(spec);
  for (std::size_t e = 0; e < series.size(); ++e)
    if (rule->should_stop({static_cast<std::int64_t>(e), {{metric, series[e]}}})) return static_cast<std::int64_t>(e);
  return -1;
}

}  // namespace

TEST_CASE("early stopping stops after `patience` epochs in a row without improvement", "[train][stopping]") {
  const ComponentSpec acc{"stopping", "early_stopping", {{"patience", std::int64_t{2}}}};
  // Best 0.8 at epoch 1; epochs 2 and 3 do not beat it: stop after epoch 3.
  CHECK(stops_after(acc, "test_accuracy", {0.5, 0.8, 0.79, 0.8, 0.9}) == 3);
  // An improvement resets the streak.
  CHECK(stops_after(acc, "test_accuracy", {0.5, 0.6, 0.55, 0.7, 0.65, 0.75}) == -1);
  // min_delta: gains of 0.005 do not count.
  const ComponentSpec delta{"stopping", "early_stopping", {{"patience", std::int64_t{2}}, {"min_delta", 0.01}}};
  CHECK(stops_after(delta, "test_accuracy", {0.5, 0.505, 0.51}) == 2);
  // Losses are minimized ("auto").
  const ComponentSpec loss{
      "stopping", "early_stopping", {{"metric", std::string("test_loss")}, {"patience", std::int64_t{1}}}};
  CHECK(stops_after(loss, "test_loss", {1.0, 0.8, 0.6, 0.7}) == 3);
  CHECK(stops_after({"stopping", "never", {}}, "test_loss", {1, 2, 3}) == -1);
  CHECK_THROWS_WITH(builtin_stop_rules().create({"stopping", "early_stopping", {{"metric", std::string("acc")}}}),
                    Catch::Contains("early_stopping.metric must be one of"));
  CHECK_THROWS_WITH(builtin_stop_rules().create({"stopping", "early_stopping", {{"patience", std::int64_t{0}}}}),
                    Catch::Contains("early_stopping.patience must be >= 1, got 0"));
}
