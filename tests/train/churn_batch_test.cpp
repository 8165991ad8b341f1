// churn_batch (engine/train/trainer.cpp, share_step): with workers away, "per_worker" trains each
// present worker on its own batch (the step's global batch shrinks), "global" deals the absent
// workers' examples of the step out among those present and weights each loss by its share, so
// that the members' average gradient is the mean over every example of the step: the run follows
// the calm run's trajectory up to float rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <iomanip>
#include <map>

#include "engine/core/metric_keys.hpp"
#include "train_ranks.hpp"

using namespace laconic;
using laconic::testing::train_ranks;

namespace {

RunConfig four_workers(const std::string& churn, ChurnBatch rule) {
  RunConfig c = testing::lenet_test_run("churn_batch", 8);
  c.workers = 4;
  c.optimizer = engine::EngineCatalog().resolve({"optimizer", "sgd", {{"lr", Value{0.1}}, {"momentum", Value{0.9}}}});
  c.churn_batch = rule;
  if (!churn.empty()) c.churn = engine::EngineCatalog().resolve({"churn", "script", {{"events", Value{churn}}}});
  return c;
}

// (step, worker) -> value of `key`, over every rank's rows.
std::map<std::pair<std::int64_t, int>, double> rows(const std::map<int, testing::RankOutcome>& ranks,
                                                    const std::string& key) {
  std::map<std::pair<std::int64_t, int>, double> out;
  for (const auto& [rank, outcome] : ranks)
    for (const auto& r : outcome.records)
      if (r.key == key) out[{r.step, r.worker}] = r.value;
  return out;
}

}  // namespace

TEST_CASE("churn_batch = \"global\" keeps the step's examples and its mean gradient; \"per_worker\" shrinks them",
          "[churn][churn_batch]") {
  // Steps 2 and 3: three present, the absent one's 16 examples dealt 6, 5, 5 (uneven shares,
  // weighted); steps 4 and 5: two present, 16 more each.
  const std::string script = "leave 3 at 2; leave 2 at 4; join 2,3 at 6";
  const auto expected = [](std::int64_t step, int worker, bool shares) {
    if (!shares || step < 2 || step >= 6) return 16.0;
    if (step >= 4) return 32.0;
    return worker == 0 ? 22.0 : 21.0;
  };
  const auto calm = train_ranks(four_workers("", ChurnBatch::PerWorker));
  const auto global = train_ranks(four_workers(script, ChurnBatch::Global));
  const auto per_worker = train_ranks(four_workers(script, ChurnBatch::PerWorker));

  for (const auto* run : {&global, &per_worker}) {
    const bool shares = run == &global;
    std::map<std::int64_t, double> per_step;
    for (const auto& [at, examples] : rows(*run, keys::kExamples)) {
      const auto [step, worker] = at;
      CHECK_FALSE((step >= 2 && step < 6 && worker == 3));  // the absent record nothing
      CHECK_FALSE((step >= 4 && step < 6 && worker == 2));
      CHECK(examples == expected(step, worker, shares));
      per_step[step] += examples;
    }
    REQUIRE(per_step.size() == 8);
    for (const auto& [step, total] : per_step)
      CHECK(total == (shares || step < 2 || step >= 6 ? 64 : step < 4 ? 48 : 32));
  }

  // The weighted losses make the members' average the mean over all 64 examples: once all are
  // back (steps 6 and 7, the same batches as the calm run's), every worker's loss is the calm
  // run's up to the order of the sums. Without the sharing (per_worker), four steps on less of the
  // data leave the model measurably elsewhere.
  const auto calm_loss = rows(calm, keys::kTrainLoss);
  const auto deviation = [&](const std::map<int, testing::RankOutcome>& run) {
    double worst = 0;
    for (const auto& [at, loss] : rows(run, keys::kTrainLoss))
      if (at.first >= 6) worst = std::max(worst, std::abs(loss - calm_loss.at(at)) / calm_loss.at(at));
    return worst;
  };
  const double shared = deviation(global), alone = deviation(per_worker);
  INFO(std::setprecision(3) << "relative deviation from the calm run's losses: global " << shared << ", per_worker "
                            << alone);
  CHECK(shared < 1e-6);
  CHECK(alone > 1e-4);
}
