#pragma once
// Functions an experiment file gives to its runs (docs/dsl.md, "Callbacks"), as the engine sees
// them: the Lua side implements this interface in every worker, which loads the same file, so
// the functions run where training runs and see the same arguments on every worker.
#include <cstdint>
#include <map>
#include <string>

namespace laconic {

class RunCallbacks {
 public:
  virtual ~RunCallbacks() = default;
  /// True when the file gave a function for `name`: "lr_schedule" or "on_epoch_end".
  virtual bool has(const std::string& name) const = 0;
  /// lr_schedule(epoch, step), both from 0: the learning rate of that step.
  virtual double learning_rate(std::int64_t epoch, std::int64_t step) = 0;
  /// The function a per-step field was given (StepFunction `id`), called with (epoch, step).
  /// Throws ConfigError when the call fails or does not return a number.
  virtual double step_function(const std::string& id, std::int64_t epoch, std::int64_t step) = 0;
  /// on_epoch_end(ctx), ctx = { epoch = e, <metric> = value, ... }: true stops the run after
  /// this epoch. Called on worker 0, which tells the others.
  virtual bool on_epoch_end(std::int64_t epoch, const std::map<std::string, double>& metrics) = 0;
};

}  // namespace laconic
