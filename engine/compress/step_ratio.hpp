#pragma once
// A sparsifier's `ratio`: a constant in (0, 1], or the experiment file's function of
// (epoch, step) (a compression-ratio schedule), evaluated and checked before every step.
#include <string>

#include "engine/core/option_fields.hpp"
#include "engine/core/step_value.hpp"

namespace laconic::compress {

class StepRatio {
 public:
  StepRatio(double ratio = 0.01) : value_(ratio), current_(ratio) {}  // NOLINT: a constant

  /// A sparsifier's ratio field, per step (a number or function(epoch, step)).
  static FieldSpec field(std::string name, double default_ratio, std::string doc);
  /// Reads `spec`'s field `name`; a constant outside (0, 1] is a ConfigError
  /// "<component>.<name> must be in (0, 1], got <value>".
  static StepRatio read(const ComponentSpec& spec, const std::string& name);

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

namespace laconic {

/// A StepRatio member is declared with OptionFields::field("ratio", &Options::ratio, doc).
template <>
struct FieldCodec<compress::StepRatio> {
  static FieldSpec spec(std::string name, const compress::StepRatio& fallback, std::string doc) {
    return compress::StepRatio::field(std::move(name), fallback, std::move(doc));
  }
  static compress::StepRatio read(const ComponentSpec& spec, const std::string& name) {
    return compress::StepRatio::read(spec, name);
  }
};

}  // namespace laconic
