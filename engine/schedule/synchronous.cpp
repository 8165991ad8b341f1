#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

void SynchronousSchedule::step(StepActions& actions, std::int64_t) {
  actions.compute_gradients();
  actions.exchange_gradients();
  actions.apply_update();
}

}  // namespace laconic::schedule
