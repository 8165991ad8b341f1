#include "engine/schedule/diloco.hpp"

#include "engine/core/error.hpp"
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
                    "averaged pseudo-gradient, start of round minus local weights")
      .integer("fragments", &DilocoOptions::fragments,
               "Streaming DiLoCo: the model's layers cut into this many fragments of about equal size, each "
               "averaged every inner_steps steps, fragment f's rounds ending f inner_steps / fragments steps "
               "before the first's; 1 = the whole model at once",
               at_least(1))
      .rule([](const ComponentSpec& spec, DilocoOptions& o) {
        if (o.fragments == 1) return;
        if (o.inner_steps.varies())
          throw ConfigError(str_cat(spec.name, ".fragments = ", o.fragments,
                                    " staggers the fragments' rounds over a constant inner_steps; got a function"));
        if (o.fragments > static_cast<std::int64_t>(o.inner_steps.constant()))
          throw ConfigError(str_cat(spec.name, ".fragments = ", o.fragments, " needs inner_steps >= fragments, got ",
                                    o.inner_steps.constant(), ": two fragments would end their rounds together"));
      });
}

DilocoSchedule::DilocoSchedule(DilocoOptions options)
    : Schedule(DilocoOptions::traits(options)), options_(options) {
  // Fragment f starts f H / F steps into its round, so its rounds end that much before the first's.
  const std::int64_t h = options_.fragments == 1 ? 0 : static_cast<std::int64_t>(options_.inner_steps.constant());
  for (std::int64_t f = 0; f < options_.fragments; ++f) since_round_.push_back(f * h / options_.fragments);
}

void DilocoSchedule::step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  actions.apply_update();
  const auto fragments = static_cast<int>(options_.fragments);
  for (int f = 0; f < fragments; ++f) {
    auto& since = since_round_[static_cast<std::size_t>(f)];
    if (!period_reached(since, options_.inner_steps, "diloco.inner_steps", at)) continue;
    if (fragments == 1)
      actions.average_models(at);
    else
      actions.average_fragment(f, fragments, at);
    since = 0;
  }
}

}  // namespace laconic::schedule
