#include "engine/train/stopping.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"

namespace laconic::train {

std::vector<FieldSpec> EarlyStoppingOptions::fields() {
  return {
      {"metric", FieldType::String, std::string(keys::kTestAccuracy),
       "epoch metric of worker 0: test_accuracy, test_loss, test_perplexity (language models), "
       "epoch_train_loss"},
      {"patience", FieldType::Int, std::int64_t{3}, "epochs in a row without improvement before the run stops, >= 1"},
      {"min_delta", FieldType::Number, 0.0, "smallest change that counts as improvement, >= 0"},
      {"goal", FieldType::String, std::string("auto"),
       "\"max\", \"min\", or \"auto\" (max for metrics ending in accuracy, else min)"},
  };
}

EarlyStoppingOptions EarlyStoppingOptions::from(const ComponentSpec& spec) {
  EarlyStoppingOptions o;
  o.metric = spec.text("metric");
  o.patience = spec.integer("patience");
  o.min_delta = spec.number("min_delta");
  o.goal = spec.text("goal");
  static const std::vector<std::string> kMetrics = {keys::kTestAccuracy, keys::kTestLoss, keys::kTestPerplexity,
                                                    keys::kEpochTrainLoss, keys::kConsensusDistance};
  if (std::find(kMetrics.begin(), kMetrics.end(), o.metric) == kMetrics.end())
    throw ConfigError(
        str_cat("early_stopping.metric must be one of test_accuracy, test_loss, "
                "test_perplexity, epoch_train_loss, consensus_distance; got \"",
                o.metric, "\""));
  if (o.patience < 1) throw ConfigError(str_cat("early_stopping.patience must be >= 1, got ", o.patience));
  if (!(o.min_delta >= 0)) throw ConfigError(str_cat("early_stopping.min_delta must be >= 0, got ", o.min_delta));
  if (o.goal != "auto" && o.goal != "max" && o.goal != "min")
    throw ConfigError(str_cat("early_stopping.goal must be \"auto\", \"max\" or \"min\", got \"", o.goal, "\""));
  return o;
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)),
      maximize_(options_.goal == "max" || (options_.goal == "auto" && options_.metric.ends_with("accuracy"))) {}

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

}  // namespace laconic::train
