#include "engine/schedule/local_sgd.hpp"

#include "engine/core/error.hpp"

namespace laconic::schedule {

std::vector<FieldSpec> LocalSgdOptions::fields() {
  return {{"period", FieldType::Int, std::int64_t{4},
           "local steps between two model averages (H), >= 1; the last step of an epoch does "
           "not force an average"}};
}

LocalSgdOptions LocalSgdOptions::from(const ComponentSpec& spec) {
  LocalSgdOptions o;
  o.period = spec.integer("period");
  if (o.period < 1) throw ConfigError(str_cat("local_sgd.period must be >= 1, got ", o.period));
  return o;
}

void LocalSgdSchedule::step(StepActions& actions, std::int64_t step) {
  actions.compute_gradients();
  actions.apply_update();
  if ((step + 1) % options_.period == 0) actions.average_models();
}

}  // namespace laconic::schedule
