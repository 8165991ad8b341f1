#include "engine/schedule/local_sgd.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace laconic::schedule {

OptionFields<LocalSgdOptions> LocalSgdOptions::fields() {
  auto fields = OptionFields<LocalSgdOptions>().step_integer(
      "period", &LocalSgdOptions::period,
      "local steps between two model averages (H); the last step of an epoch does not force an average", at_least(1));
  return join_policy_field(fields, &LocalSgdOptions::join);
}

bool period_reached(std::int64_t& since, const StepValue& period, const char* field, const StepPoint& at) {
  const double steps = period.at(at);
  if (!(steps >= 1 && std::trunc(steps) == steps))
    throw ConfigError(str_cat(field, " (a function) returned ", steps, " at epoch ", at.epoch, ", step ", at.step,
                              "; it must be an integer >= 1"));
  return ++since >= static_cast<std::int64_t>(steps);
}

void LocalSgdSchedule::step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  actions.apply_update();
  if (period_reached(since_average_, options_.period, "local_sgd.period", at)) {
    actions.average_models(at);
    since_average_ = 0;
  }
}

void LocalSgdSchedule::pass(const StepPoint& at) {
  if (period_reached(since_average_, options_.period, "local_sgd.period", at)) since_average_ = 0;
}

}  // namespace laconic::schedule
