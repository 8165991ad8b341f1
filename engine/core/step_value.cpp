#include "engine/core/step_value.hpp"

#include <cmath>

#include "engine/core/callbacks.hpp"
#include "engine/core/error.hpp"

namespace laconic {

StepValue StepValue::read(const ComponentSpec& spec, const std::string& field) {
  StepValue v;
  v.owner_ = str_cat(spec.name, ".", field);
  if (const auto* function = std::get_if<StepFunction>(&spec.at(field)))
    v.function_ = function->id;
  else
    v.constant_ = spec.number(field);
  return v;
}

double StepValue::constant() const {
  LACONIC_ENFORCE(!varies(), owner_, " is the function ", function_, ", not a constant");
  return constant_;
}

double StepValue::at(const StepPoint& point) const {
  if (!varies()) return constant_;
  LACONIC_ENFORCE(point.callbacks != nullptr, owner_, " is the experiment file's function ", function_,
                  "; only a worker that loaded the file (laconic run) can call it");
  const double value = point.callbacks->step_function(function_, point.epoch, point.step);
  if (!std::isfinite(value))
    throw ConfigError(str_cat(owner_, " = function at ", function_, " returned ", value, " for epoch ", point.epoch,
                              ", step ", point.step, "; it must return a finite number"));
  return value;
}

}  // namespace laconic
