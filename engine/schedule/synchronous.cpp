#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

void SynchronousSchedule::step(StepActions& actions, const StepPoint&) { synchronous_step(actions); }

void synchronous_step(StepActions& actions) {
  actions.compute_gradients();
  if (actions.topology_mixes_models()) {  // decentralized SGD (gossip)
    actions.apply_update();
    actions.average_models();
    return;
  }
  actions.exchange_gradients();
  actions.apply_update();
}

}  // namespace laconic::schedule
