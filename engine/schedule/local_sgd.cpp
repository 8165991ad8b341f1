#include "engine/schedule/local_sgd.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace laconic::schedule {

std::vector<FieldSpec> LocalSgdOptions::fields() {
  FieldSpec period{"period", FieldType::Int, std::int64_t{4},
                   "local steps between two model averages (H), >= 1; the last step of an "
                   "epoch does not force an average"};
  period.per_step = true;
  return {period};
}

LocalSgdOptions LocalSgdOptions::from(const ComponentSpec& spec) {
  LocalSgdOptions o;
  o.period = StepValue::read(spec, "period");
  if (!o.period.varies() && o.period.constant() < 1)
    throw ConfigError(str_cat("local_sgd.period must be >= 1, got ", o.period.constant()));
  return o;
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
