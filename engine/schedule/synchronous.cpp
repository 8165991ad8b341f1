#include "engine/schedule/synchronous.hpp"

namespace laconic::schedule {

void SynchronousSchedule::step(StepActions& actions, const StepPoint& at) { synchronous_step(actions, at); }

void synchronous_step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  if (actions.topology_mixes_models()) {  // decentralized SGD (gossip)
    actions.apply_update();
    actions.average_models(at);
    return;
  }
  actions.exchange_gradients();
  actions.apply_update();
}

}  // namespace laconic::schedule
