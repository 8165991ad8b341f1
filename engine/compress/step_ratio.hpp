#pragma once
// A sparsifier's `ratio`: a constant in (0, 1], or the experiment file's function of
// (epoch, step) (a compression-ratio schedule), evaluated and checked before every step.
#include <string>

#include "engine/core/component.hpp"
#include "engine/core/step_value.hpp"

namespace laconic::compress {

class StepRatio {
 public:
  StepRatio(double ratio = 0.01) : value_(ratio), current_(ratio) {}  // NOLINT: a constant

  /// The `ratio` field of a sparsifier, per step (a number or function(epoch, step)).
  static FieldSpec field(double default_ratio, const std::string& doc);
  /// Reads `spec`'s `ratio`; a constant outside (0, 1] is a ConfigError
  /// "<name>.ratio must be in (0, 1], got <value>".
  static StepRatio read(const ComponentSpec& spec);

  /// The ratio of the current step: the constant, or the function's value at the last
  /// set_step() (NaN before the first, which topk_count() refuses).
  operator double() const { return current_; }  // NOLINT: used as the number it stands for
  bool varies() const { return value_.varies(); }
  /// Evaluates a function at `point`; a value outside (0, 1] is a ConfigError naming the
  /// function and the step. Nothing for a constant.
  void set_step(const StepPoint& point);

 private:
  StepValue value_;
  double current_;
  std::string owner_ = "ratio";
};

}  // namespace laconic::compress
