#include "engine/schedule/local_sgd.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace laconic::schedule {

OptionFields<LocalSgdOptions> LocalSgdOptions::fields() {
  return OptionFields<LocalSgdOptions>().step_integer(
      "period", &LocalSgdOptions::period,
      "local steps between two model averages (H); the last step of an epoch does not force an average", at_least(1));
}

void LocalSgdSchedule::step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  actions.apply_update();
  const double period = options_.period.at(at);
  if (!(period >= 1 && std::trunc(period) == period))
    throw ConfigError(str_cat("local_sgd.period (a function) returned ", period, " at epoch ", at.epoch, ", step ",
                              at.step, "; it must be an integer >= 1"));
  if (++since_average_ >= static_cast<std::int64_t>(period)) {
    actions.average_models();
    since_average_ = 0;
  }
}

}  // namespace laconic::schedule
