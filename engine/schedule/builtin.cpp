#include "engine/schedule/builtin.hpp"

#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

Registry<Schedule> builtin_schedules() {
  Registry<Schedule> r("schedule");
  r.add<SynchronousSchedule, SynchronousOptions>(
      "synchronous", "bulk-synchronous SGD: compute, average gradients, update, every step");
  return r;
}

}  // namespace laconic::schedule
