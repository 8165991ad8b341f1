#include "engine/compress/step_ratio.hpp"

#include <limits>

#include "engine/core/error.hpp"

namespace laconic::compress {

FieldSpec StepRatio::field(double default_ratio, const std::string& doc) {
  FieldSpec spec{"ratio", FieldType::Number, default_ratio, doc};
  spec.per_step = true;
  return spec;
}

StepRatio StepRatio::read(const ComponentSpec& spec) {
  StepRatio r;
  r.owner_ = str_cat(spec.name, ".ratio");
  r.value_ = StepValue::read(spec, "ratio");
  if (r.value_.varies()) {
    r.current_ = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  r.current_ = r.value_.constant();
  if (!(r.current_ > 0.0 && r.current_ <= 1.0))
    throw ConfigError(str_cat(r.owner_, " must be in (0, 1], got ", r.current_));
  return r;
}

void StepRatio::set_step(const StepPoint& point) {
  if (!value_.varies()) return;
  const double ratio = value_.at(point);
  if (!(ratio > 0.0 && ratio <= 1.0))
    throw ConfigError(str_cat(owner_, " (a function) returned ", ratio, " at epoch ", point.epoch, ", step ",
                              point.step, "; it must be in (0, 1]"));
  current_ = ratio;
}

}  // namespace laconic::compress
