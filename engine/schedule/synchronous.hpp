#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

struct SynchronousOptions {
  static OptionFields<SynchronousOptions> fields() { return {}; }
  static ScheduleTraits traits(const SynchronousOptions&) {
    return {.staleness_bound = std::nullopt, .averages_models = false, .exchanges_each_gradient = true};
  }
};

/// One bulk-synchronous step: compute, exchange, update (with a topology that mixes models:
/// compute, update, mix). Also the worker's side of stale_sync and async, whose difference is
/// in when the parameter server answers.
void synchronous_step(StepActions& actions, const StepPoint& at);

/// Bulk-synchronous SGD: every step, every worker computes a gradient, the gradients are averaged,
/// and every worker applies the same update.
class SynchronousSchedule : public Schedule {
 public:
  explicit SynchronousSchedule(SynchronousOptions options) : Schedule(SynchronousOptions::traits(options)) {}
  std::string name() const override { return "synchronous"; }
  void step(StepActions& actions, const StepPoint& at) override;
};

}  // namespace laconic::schedule
