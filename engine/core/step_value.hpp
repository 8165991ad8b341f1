#pragma once
// Numbers that may change during training: a field given either as a constant or as a function
// of (epoch, step) in the experiment file (`local_sgd { period = function(epoch, step) ... }`).
#include <cstdint>
#include <string>

#include "engine/core/component.hpp"

namespace laconic {

class RunCallbacks;

/// Where training stands, and who can evaluate the experiment file's functions (null outside a
/// worker that loaded the file: tests, benchmarks).
struct StepPoint {
  std::int64_t epoch = 0;  ///< from 0
  std::int64_t step = 0;   ///< global step, from 0
  RunCallbacks* callbacks = nullptr;
};

/// A per-step field's value: a constant, or the experiment file's function of (epoch, step).
class StepValue {
 public:
  StepValue(double constant = 0) : constant_(constant) {}  // NOLINT: a constant is a StepValue
  /// Reads `field` of a resolved spec (FieldSpec::per_step).
  static StepValue read(const ComponentSpec& spec, const std::string& field);

  /// True when it is a function (its value may change from step to step).
  bool varies() const { return !function_.empty(); }
  /// The constant; for a function, InvariantError.
  double constant() const;
  /// The value at `at`: the constant, or the function called with (at.epoch, at.step). Throws
  /// ConfigError when the function does not return a finite number (naming `owner`, e.g.
  /// "topk.ratio") and InvariantError when `at` has no callbacks to call it with.
  double at(const StepPoint& point) const;

 private:
  double constant_ = 0;
  std::string function_;  // StepFunction::id, empty for a constant
  std::string owner_;     // "topk.ratio", for messages
};

}  // namespace laconic
