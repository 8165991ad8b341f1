#include "engine/schedule/stale_sync.hpp"

#include "engine/core/error.hpp"
#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

std::vector<FieldSpec> StaleSyncOptions::fields() {
  return {{"staleness", FieldType::Int, std::int64_t{2},
           "steps a worker may run ahead of the slowest unfinished worker, >= 0"}};
}

StaleSyncOptions StaleSyncOptions::from(const ComponentSpec& spec) {
  StaleSyncOptions o;
  o.staleness = spec.integer("staleness");
  if (o.staleness < 0) throw ConfigError(str_cat("stale_sync.staleness must be >= 0, got ", o.staleness));
  return o;
}

// Worker side, both schedules: a synchronous step; the parameter server decides when the pull
// comes back.
void StaleSyncSchedule::step(StepActions& actions, const StepPoint&) { synchronous_step(actions); }

void AsyncSchedule::step(StepActions& actions, const StepPoint&) { synchronous_step(actions); }

}  // namespace laconic::schedule
