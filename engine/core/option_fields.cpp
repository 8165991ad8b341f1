#include "engine/core/option_fields.hpp"

#include <cmath>

namespace laconic {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// An end as a message writes it: 65535, 0.5, 1e-08.
std::string end_text(double end) {
  if (std::isinf(end)) return "inf";
  if (end == std::trunc(end) && std::fabs(end) < 1e15) return str_cat(static_cast<std::int64_t>(end));
  return str_cat(end);
}

}  // namespace

bool Bounds::bounded() const { return lo > -kInf || hi < kInf || finite; }

bool Bounds::contains(double value) const {
  if (std::isnan(value)) return false;
  if (finite && std::isinf(value)) return false;
  const bool above_lo = lo_open ? value > lo : value >= lo;
  const bool below_hi = hi_open ? value < hi : value <= hi;
  return above_lo && below_hi;
}

std::string Bounds::text() const {
  if (hi == kInf && !finite) return str_cat(lo_open ? "> " : ">= ", end_text(lo));
  return str_cat("in ", lo_open ? "(" : "[", end_text(lo), ", ", end_text(hi), hi_open || hi == kInf ? ")" : "]");
}

Bounds at_least(double lo) { return Bounds{lo, kInf, false, false, false}; }
Bounds above(double lo) { return Bounds{lo, kInf, true, false, false}; }
Bounds closed(double lo, double hi) { return Bounds{lo, hi, false, false, false}; }
Bounds closed_open(double lo, double hi) { return Bounds{lo, hi, false, true, false}; }
Bounds open_closed(double lo, double hi) { return Bounds{lo, hi, true, false, false}; }
Bounds finite_above(double lo) { return Bounds{lo, kInf, true, true, true}; }
Bounds finite_at_least(double lo) { return Bounds{lo, kInf, false, true, true}; }

ConfigError out_of_range(const ComponentSpec& spec, const std::string& field, const std::string& what,
                         const std::string& got) {
  return ConfigError(str_cat(spec.name, ".", field, " must be ", what, ", got ", got));
}

std::string quoted_choices(const std::vector<std::string>& allowed) {
  std::string out;
  for (const std::string& a : allowed) out += str_cat(out.empty() ? "" : ", ", "\"", a, "\"");
  return out;
}

}  // namespace laconic
