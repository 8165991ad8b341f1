#pragma once
// Learning-rate schedules: the factor the optimizer's configured learning rate is multiplied by
// at each step. Common fields of every schedule: a linear warm-up and the linear scaling rule.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"

namespace laconic::train {

/// Where training stands when the factor is asked for.
struct TrainingClock {
  std::int64_t step = 0;   ///< global step, from 0
  std::int64_t epoch = 0;  ///< from 0
  std::int64_t steps_per_epoch = 1;
  std::int64_t epochs = 1;
  std::int64_t workers = 1;
};

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  virtual std::string name() const = 0;
  /// The schedule's own factor (1 at the start), before warm-up and scaling.
  virtual double factor(const TrainingClock& clock) const = 0;
};

struct ConstantLrOptions {
  static OptionFields<ConstantLrOptions> fields() { return {}; }
};

/// The configured learning rate throughout.
class ConstantLr : public LrSchedule {
 public:
  explicit ConstantLr(ConstantLrOptions) {}
  std::string name() const override { return "constant"; }
  double factor(const TrainingClock&) const override { return 1.0; }
};

struct StepDecayOptions {
  std::int64_t every = 1;
  double factor = 0.1;

  static OptionFields<StepDecayOptions> fields();
};

/// factor^(floor(epoch / every)): e.g. x0.1 every 30 epochs (He et al. 2016).
class StepDecayLr : public LrSchedule {
 public:
  explicit StepDecayLr(StepDecayOptions options) : options_(options) {}
  std::string name() const override { return "step_decay"; }
  double factor(const TrainingClock& clock) const override;

 private:
  StepDecayOptions options_;
};

struct CosineLrOptions {
  double final = 0.0;

  static OptionFields<CosineLrOptions> fields();
};

/// Cosine annealing over the whole run (Loshchilov & Hutter 2017), per step.
class CosineLr : public LrSchedule {
 public:
  explicit CosineLr(CosineLrOptions options) : options_(options) {}
  std::string name() const override { return "cosine"; }
  double factor(const TrainingClock& clock) const override;

 private:
  CosineLrOptions options_;
};

struct LuaFunctionLrOptions {
  static OptionFields<LuaFunctionLrOptions> fields() { return {}; }
};

/// Stands for `lr_schedule = function(epoch, step) ... end` in the experiment file: the worker
/// asks the file's function (RunCallbacks) for each step's rate instead of this.
class LuaFunctionLr : public LrSchedule {
 public:
  explicit LuaFunctionLr(LuaFunctionLrOptions) {}
  std::string name() const override { return "lua_function"; }
  /// Throws InvariantError: only a worker that loaded the experiment file can evaluate it.
  double factor(const TrainingClock& clock) const override;
};

/// The factor applied at `clock`: the schedule's, times the linear scaling rule (x workers when
/// `scale_with_workers`, Goyal et al. 2017), times a linear warm-up from 1/warmup_steps to 1
/// over the first `warmup_steps` steps. `spec` is the resolved lr_schedule (common fields).
double lr_factor(const LrSchedule& schedule, const ComponentSpec& spec, const TrainingClock& clock);

/// Every built-in learning-rate schedule, with the common fields warmup_steps and
/// scale_with_workers.
Registry<LrSchedule> builtin_lr_schedules();

}  // namespace laconic::train
