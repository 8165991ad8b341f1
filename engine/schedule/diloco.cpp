#include "engine/schedule/diloco.hpp"

#include "engine/schedule/local_sgd.hpp"

namespace laconic::schedule {

ComponentSpec default_outer_optimizer() {
  return {.kind = "optimizer",
          .name = "sgd",
          .fields = {{"lr", 0.7}, {"momentum", 0.9}, {"nesterov", true}, {"weight_decay", 0.0}}};
}

OptionFields<DilocoOptions> DilocoOptions::fields() {
  return OptionFields<DilocoOptions>()
      .step_integer("inner_steps", &DilocoOptions::inner_steps,
                    "inner optimizer steps per round (H); the last step of an epoch does not end a round",
                    at_least(1))
      .component_of("optimizer", "outer", &DilocoOptions::outer,
                    "the outer optimizer (any optimizer constructor): it steps the shared weights with the workers' "
                    "averaged pseudo-gradient, start of round minus local weights");
}

void DilocoSchedule::step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  actions.apply_update();
  if (period_reached(since_round_, options_.inner_steps, "diloco.inner_steps", at)) {
    actions.average_models();
    since_round_ = 0;
  }
}

}  // namespace laconic::schedule
