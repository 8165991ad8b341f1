#include "engine/compress/step_ratio.hpp"

#include <limits>

#include "engine/core/error.hpp"

namespace laconic::compress {
namespace {

const Bounds kRange = open_closed(0, 1);  // a ratio of elements sent

}  // namespace

FieldSpec StepRatio::field(std::string name, double default_ratio, std::string doc) {
  FieldSpec spec{std::move(name), FieldType::Number, default_ratio, str_cat(doc, ", ", kRange.text())};
  spec.per_step = true;
  return spec;
}

StepRatio StepRatio::read(const ComponentSpec& spec, const std::string& name) {
  StepRatio r;
  r.owner_ = str_cat(spec.name, ".", name);
  r.value_ = StepValue::read(spec, name);
  if (r.value_.varies()) {
    r.current_ = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  r.current_ = r.value_.constant();
  if (!kRange.contains(r.current_)) throw out_of_range(spec, name, kRange.text(), str_cat(r.current_));
  return r;
}

void StepRatio::set_step(const StepPoint& point) {
  if (!value_.varies()) return;
  const double ratio = value_.at(point);
  if (!kRange.contains(ratio))
    throw ConfigError(str_cat(owner_, " (a function) returned ", ratio, " at epoch ", point.epoch, ", step ",
                              point.step, "; it must be ", kRange.text()));
  current_ = ratio;
}

}  // namespace laconic::compress
