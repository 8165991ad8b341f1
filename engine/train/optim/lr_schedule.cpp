#include "engine/train/optim/lr_schedule.hpp"

#include <cmath>
#include <numbers>

#include "engine/core/error.hpp"

namespace laconic::train {

OptionFields<StepDecayOptions> StepDecayOptions::fields() {
  using O = StepDecayOptions;
  return OptionFields<O>()
      .integer("every", &O::every, "epochs between two decays", at_least(1))
      .number("factor", &O::factor, "multiplier at each decay", open_closed(0, 1));
}

double StepDecayLr::factor(const TrainingClock& clock) const {
  return std::pow(options_.factor, static_cast<double>(clock.epoch / options_.every));
}

OptionFields<CosineLrOptions> CosineLrOptions::fields() {
  return OptionFields<CosineLrOptions>().number("final", &CosineLrOptions::final, "factor reached at the last step",
                                                closed(0, 1));
}

double CosineLr::factor(const TrainingClock& clock) const {
  const double total = static_cast<double>(std::max<std::int64_t>(1, clock.epochs * clock.steps_per_epoch - 1));
  const double progress = std::min(1.0, static_cast<double>(clock.step) / total);
  return options_.final + (1 - options_.final) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

double lr_factor(const LrSchedule& schedule, const ComponentSpec& spec, const TrainingClock& clock) {
  double f = schedule.factor(clock);
  if (spec.fields.count("scale_with_workers") && spec.flag("scale_with_workers"))
    f *= static_cast<double>(clock.workers);
  const std::int64_t warmup = spec.fields.count("warmup_steps") ? spec.integer("warmup_steps") : 0;
  if (warmup < 0) throw ConfigError(str_cat(spec.name, ".warmup_steps must be >= 0, got ", warmup));
  if (clock.step < warmup) f *= static_cast<double>(clock.step + 1) / static_cast<double>(warmup);
  return f;
}

double LuaFunctionLr::factor(const TrainingClock&) const {
  throw InvariantError(
      "lr_schedule is a Lua function of the experiment file; only a worker "
      "that loaded the file (laconic run) can evaluate it");
}

Registry<LrSchedule> builtin_lr_schedules() {
  Registry<LrSchedule> r("lr_schedule");
  r.add<ConstantLr, ConstantLrOptions>("constant", "the optimizer's learning rate throughout");
  r.add<StepDecayLr, StepDecayOptions>("step_decay", "multiplies the learning rate by `factor` every `every` epochs");
  r.add<LuaFunctionLr, LuaFunctionLrOptions>("lua_function",
                                             "set by writing lr_schedule = function(epoch, step) return lr end: the "
                                             "rate of every step from the experiment file's function (no constructor)",
                                             /*internal=*/true);
  r.add<CosineLr, CosineLrOptions>("cosine",
                                   "cosine annealing from the learning rate to `final` times it over the run");
  r.add_common_fields({
      {"warmup_steps", FieldType::Int, std::int64_t{0},
       "steps of linear warm-up from lr/warmup_steps to the scheduled rate, >= 0"},
      {"scale_with_workers", FieldType::Bool, false,
       "multiply the learning rate by the number of workers (linear scaling rule)"},
  });
  return r;
}

}  // namespace laconic::train
