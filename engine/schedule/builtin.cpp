#include "engine/schedule/builtin.hpp"

#include "engine/schedule/local_sgd.hpp"
#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

Registry<Schedule> builtin_schedules() {
  Registry<Schedule> r("schedule");
  r.add<SynchronousSchedule, SynchronousOptions>(
      "synchronous", "bulk-synchronous SGD: compute, average gradients, update, every step");
  r.add<LocalSgdSchedule, LocalSgdOptions>(
      "local_sgd", "local SGD: `period` local steps per worker, then the models are averaged");
  return r;
}

}  // namespace laconic::schedule
