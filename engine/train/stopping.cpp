#include "engine/train/stopping.hpp"

#include <algorithm>

#include "engine/comm/elastic.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"

namespace laconic::train {

OptionFields<EarlyStoppingOptions> EarlyStoppingOptions::fields() {
  using O = EarlyStoppingOptions;
  return OptionFields<O>()
      .text("metric", &O::metric,
            "epoch metric of worker 0 (test_perplexity: language models; consensus_distance: gossip)",
            {keys::kTestAccuracy, keys::kTestLoss, keys::kTestPerplexity, keys::kEpochTrainLoss,
             keys::kConsensusDistance})
      .integer("patience", &O::patience, "epochs in a row without improvement before the run stops", at_least(1))
      .number("min_delta", &O::min_delta, "smallest change that counts as improvement", at_least(0))
      .choice("goal", &O::goal,
              "whether larger is better; \"auto\": the metric's own direction (\"min\" for losses and perplexity, "
              "\"max\" for accuracy)",
              {{O::Goal::Auto, "auto"}, {O::Goal::Max, "max"}, {O::Goal::Min, "min"}});
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)),
      maximize_(options_.goal == EarlyStoppingOptions::Goal::Max ||
                (options_.goal == EarlyStoppingOptions::Goal::Auto && keys::goal_of(options_.metric) == Goal::Max)) {}

bool EarlyStopping::should_stop(const EpochMetrics& metrics) {
  auto it = metrics.values.find(options_.metric);
  LACONIC_ENFORCE(it != metrics.values.end(), "early_stopping: worker 0 has no '", options_.metric,
                  "' at the end of epoch ", metrics.epoch);
  const double value = it->second;
  const bool improved = !seen_ || (maximize_ ? value > best_ + options_.min_delta : value < best_ - options_.min_delta);
  if (improved) {
    best_ = value;
    seen_ = true;
    streak_ = 0;
    return false;
  }
  return ++streak_ >= options_.patience;
}

Registry<StopRule> builtin_stop_rules() {
  Registry<StopRule> r("stopping");
  r.add<NeverStop, NeverStopOptions>("never", "every epoch runs");
  r.add<EarlyStopping, EarlyStoppingOptions>("early_stopping",
                                             "stops when `metric` has not improved for `patience` epochs in a row");
  return r;
}

bool decide_stop(StopRule* rule, RunCallbacks* callbacks, const EpochMetrics& metrics, comm::Communicator& comm,
                 std::int64_t workers) {
  std::uint8_t decision = 0;
  comm::ElasticGroup* elastic = comm.elastic();
  if (comm.rank() == 0) {
    // Both are asked (a rule keeps its streak even when the function stops first).
    const bool by_rule = rule != nullptr && rule->should_stop(metrics);
    const bool by_function = callbacks != nullptr && callbacks->on_epoch_end(metrics.epoch, metrics.values);
    decision = by_rule || by_function ? 1 : 0;
    if (elastic != nullptr)
      elastic->membership().post_stop(metrics.epoch, decision == 1);
    else
      for (int r = 1; r < workers; ++r) comm.send_recv(r, {&decision, 1}, r, {});
  } else if (elastic != nullptr) {
    decision = elastic->membership().stop_posted(metrics.epoch) ? 1 : 0;  // told whatever the members' losses
  } else {
    comm.send_recv(0, {}, 0, {&decision, 1});
  }
  return decision == 1;
}

}  // namespace laconic::train
