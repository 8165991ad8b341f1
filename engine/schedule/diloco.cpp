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
  auto fields =
      OptionFields<DilocoOptions>()
          .step_integer("inner_steps", &DilocoOptions::inner_steps,
                        "inner optimizer steps per round (H); the last step of an epoch does not end a round",
                        at_least(1))
          .component_of(
              "optimizer", "outer", &DilocoOptions::outer,
              "the outer optimizer (any optimizer constructor): it steps the shared weights with the workers' "
              "averaged pseudo-gradient, start of round minus local weights")
          .integer("fragments", &DilocoOptions::fragments,
                   "Streaming DiLoCo: the model's layers cut into this many fragments of about equal size, each "
                   "averaged every inner_steps steps, fragment f's rounds ending f inner_steps / fragments steps "
                   "before the first's; 1 = the whole model at once",
                   at_least(1))
          .integer("overlap", &DilocoOptions::overlap,
                   "Streaming DiLoCo's tau: inner steps a fragment's exchange runs under before its outer-stepped "
                   "weights are applied; its communication counts only where it outlasts their compute; 0 = applied "
                   "at once. Below inner_steps / fragments (whole steps)",
                   at_least(0))
          .number("alpha", &DilocoOptions::alpha,
                  "Streaming DiLoCo's mixing factor: a fragment's local weights become alpha local + (1 - alpha) "
                  "shared when its exchange is applied; 0 = the shared weights (DiLoCo)",
                  closed_open(0.0, 1.0))
          .flag("islands", &DilocoOptions::islands,
                "DiLoCo across islands (network = cluster { }): every inner step averages the gradient inside each "
                "island, in fp32 on its own links (synchronous data parallelism there), and every inner_steps the "
                "islands' pseudo-gradients are averaged across them");
  join_policy_field(fields, &DilocoOptions::join);
  return fields.rule([](const ComponentSpec& spec, DilocoOptions& o) {
    if (o.islands && o.streams())
      throw ConfigError(str_cat(spec.name,
                                ".islands = true takes whole-model rounds: Streaming DiLoCo (fragments, "
                                "overlap, alpha) across islands is not built"));
    if (o.overlap > 0) {
      if (o.inner_steps.varies())
        throw ConfigError(
            str_cat(spec.name, ".overlap = ", o.overlap, " needs a constant inner_steps; got a function"));
      const auto between = static_cast<std::int64_t>(o.inner_steps.constant()) / o.fragments;
      if (o.overlap >= between)
        throw ConfigError(str_cat(spec.name, ".overlap = ", o.overlap,
                                  " must be below inner_steps / fragments = ", between,
                                  " (whole steps between two fragments' rounds): one fragment's exchange "
                                  "would still run when the next one's begins"));
    }
    if (o.fragments == 1) return;
    if (o.inner_steps.varies())
      throw ConfigError(str_cat(spec.name, ".fragments = ", o.fragments,
                                " staggers the fragments' rounds over a constant inner_steps; got a function"));
    if (o.fragments > static_cast<std::int64_t>(o.inner_steps.constant()))
      throw ConfigError(str_cat(spec.name, ".fragments = ", o.fragments, " needs inner_steps >= fragments, got ",
                                o.inner_steps.constant(), ": two fragments would end their rounds together"));
  });
}

DilocoSchedule::DilocoSchedule(DilocoOptions options) : Schedule(DilocoOptions::traits(options)), options_(options) {
  // Fragment f starts f H / F steps into its round, so its rounds end that much before the first's.
  const std::int64_t h = options_.fragments == 1 ? 0 : static_cast<std::int64_t>(options_.inner_steps.constant());
  for (std::int64_t f = 0; f < options_.fragments; ++f) since_round_.push_back(f * h / options_.fragments);
  until_applied_.assign(since_round_.size(), 0);
}

void DilocoSchedule::step(StepActions& actions, const StepPoint& at) {
  actions.compute_gradients();
  if (options_.islands) actions.average_gradients_in_island();
  actions.apply_update();
  const auto fragments = static_cast<int>(options_.fragments);
  for (int f = 0; f < fragments; ++f) {
    auto& left = until_applied_[static_cast<std::size_t>(f)];
    if (left > 0 && --left == 0) actions.apply_fragment(f, options_.alpha);
    auto& since = since_round_[static_cast<std::size_t>(f)];
    if (!period_reached(since, options_.inner_steps, "diloco.inner_steps", at)) continue;
    end_round(actions, f, at);
    since = 0;
  }
}

void DilocoSchedule::pass(const StepPoint& at) {
  for (auto& since : since_round_)
    if (period_reached(since, options_.inner_steps, "diloco.inner_steps", at)) since = 0;
}

void DilocoSchedule::end_round(StepActions& actions, int fragment, const StepPoint& at) {
  if (!options_.streams()) {
    actions.average_models(at);
    return;
  }
  actions.average_fragment(fragment, static_cast<int>(options_.fragments), at);
  if (options_.overlap == 0)
    actions.apply_fragment(fragment, options_.alpha);
  else
    until_applied_[static_cast<std::size_t>(fragment)] = options_.overlap;
}

void DilocoSchedule::save_state(StateWriter& out) const {
  out.array(since_round_);
  if (options_.overlap > 0) out.array(until_applied_);  // what files before overlap wrote stays readable
}

void DilocoSchedule::load_state(StateReader& in) {
  in.array_exact(std::span<std::int64_t>(since_round_));
  if (options_.overlap > 0) in.array_exact(std::span<std::int64_t>(until_applied_));
}

}  // namespace laconic::schedule
