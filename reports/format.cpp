#include "reports/format.hpp"

#include <array>
#include <cmath>
#include <cstdio>

namespace laconic::reports {
namespace {

template <class... Args>
std::string print(const char* format, Args... args) {
  std::array<char, 64> buffer{};
  std::snprintf(buffer.data(), buffer.size(), format, args...);
  return buffer.data();
}

}  // namespace

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return kMissing;
  return print("%.*f", digits, value);
}

std::string percent(double fraction) {
  if (std::isnan(fraction)) return kMissing;
  return print("%.0f%%", 100 * fraction);
}

std::string human_bytes(double bytes) {
  if (std::isnan(bytes)) return kMissing;
  if (std::isinf(bytes)) return bytes > 0 ? "inf" : "-inf";
  static constexpr std::array<const char*, 6> kUnits{"B", "kB", "MB", "GB", "TB", "PB"};
  std::size_t unit = 0;
  double scaled = bytes;
  while (std::fabs(scaled) >= 999.5 && unit + 1 < kUnits.size()) {
    scaled /= 1000;
    ++unit;
  }
  if (unit == 0) return print("%.0f B", scaled);
  const int decimals = std::fabs(scaled) >= 99.95 ? 0 : std::fabs(scaled) >= 9.995 ? 1 : 2;
  return print("%.*f %s", decimals, scaled, kUnits[unit]);
}

std::string ratio(double numerator, double denominator) {
  if (std::isnan(numerator) || std::isnan(denominator) || denominator == 0) return kMissing;
  return ratio_text(numerator / denominator);
}

std::string ratio_text(double value) { return std::isnan(value) ? kMissing : print("%.1fx", value); }

std::string relative_error(double predicted, double measured) {
  if (std::isnan(predicted) || std::isnan(measured) || measured <= 0) return kMissing;
  const double e = (predicted / measured - 1) * 100;
  return (e >= 0 ? "+" : "") + fixed(e, 0) + "%";
}

std::string seconds(double value) {
  if (std::isnan(value)) return kMissing;
  return print("%.3g", value);
}

std::string raw_number(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return print("%.10g", value);
}

std::string human_seconds(double seconds) {
  char buf[32];
  if (std::isnan(seconds)) return "-";
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else {
    auto minutes = static_cast<long>(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", minutes, static_cast<long>(seconds) - minutes * 60);
  }
  return buf;
}

std::string significant_digits(double value, int digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

}  // namespace laconic::reports
