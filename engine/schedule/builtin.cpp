#include "engine/schedule/builtin.hpp"

#include "engine/schedule/diloco.hpp"
#include "engine/schedule/local_sgd.hpp"
#include "engine/schedule/stale_sync.hpp"
#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

Registry<Schedule> builtin_schedules() {
  Registry<Schedule> r("schedule");
  r.add<SynchronousSchedule, SynchronousOptions>(
      "synchronous", "bulk-synchronous SGD: compute, average gradients, update, every step");
  r.add<LocalSgdSchedule, LocalSgdOptions>("local_sgd",
                                           "local SGD: `period` local steps per worker, then the models are averaged");
  r.add<DilocoSchedule, DilocoOptions>("diloco",
                                       "DiLoCo: `inner_steps` local steps per worker, then an `outer` optimizer steps "
                                       "the shared weights with the averaged pseudo-gradient");
  r.add<StaleSyncSchedule, StaleSyncOptions>("stale_sync",
                                             "stale-synchronous SGD with a parameter server: no worker more than "
                                             "`staleness` steps ahead of the slowest");
  r.add<AsyncSchedule, AsyncOptions>("async",
                                     "asynchronous SGD with a parameter server: each push applied as it arrives");
  r.add_common_fields({
      {"stragglers", FieldType::Int, std::int64_t{0}, "how many workers are slowed down: the highest ranks, >= 0"},
      {"straggler_delay", FieldType::Number, 0.0,
       "seconds each straggler sleeps per step after its backward pass, >= 0"},
      {"straggler_jitter", FieldType::Number, 0.0,
       "relative spread of the delay: delay x uniform(1 - j, 1 + j), j in [0, 1]"},
  });
  return r;
}

}  // namespace laconic::schedule
