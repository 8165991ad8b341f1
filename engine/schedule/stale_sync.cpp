#include "engine/schedule/stale_sync.hpp"

#include "engine/core/error.hpp"
#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

OptionFields<StaleSyncOptions> StaleSyncOptions::fields() {
  return OptionFields<StaleSyncOptions>().integer("staleness", &StaleSyncOptions::staleness,
                                                  "steps a worker may run ahead of the slowest unfinished worker",
                                                  at_least(0));
}

// Worker side, both schedules: a synchronous step; the parameter server decides when the pull
// comes back.
void StaleSyncSchedule::step(StepActions& actions, const StepPoint& at) { synchronous_step(actions, at); }

void AsyncSchedule::step(StepActions& actions, const StepPoint& at) { synchronous_step(actions, at); }

}  // namespace laconic::schedule
