#include "engine/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"

namespace laconic {
namespace {

/// Splits "1.5 Gbit/s" into 1.5 and "Gbit"; false when no number leads.
bool split_quantity(const std::string& text, double& number, std::string& unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  number = std::strtod(begin, &end);
  if (end == begin) return false;
  std::string rest(end);
  std::string compact;
  for (char c : rest)
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  if (compact.size() >= 2 && compact.compare(compact.size() - 2, 2, "/s") == 0) compact.resize(compact.size() - 2);
  unit = compact;
  return true;
}

}  // namespace

double parse_bandwidth(const std::string& field, const std::string& text) {
  static const std::vector<std::pair<std::string, double>> kUnits = {
      {"bit", 1}, {"Kbit", 1e3}, {"Mbit", 1e6}, {"Gbit", 1e9}, {"Tbit", 1e12},
      {"B", 8},   {"KB", 8e3},   {"MB", 8e6},   {"GB", 8e9},   {"TB", 8e12}};
  double number = 0;
  std::string unit;
  if (split_quantity(text, number, unit))
    for (const auto& [name, scale] : kUnits)
      if (unit == name && number > 0) return number * scale;
  throw ConfigError(str_cat(field,
                            " must be a positive rate such as \"1Gbit\", \"100Mbit/s\" or "
                            "\"125MB/s\" (units: bit, Kbit, Mbit, Gbit, Tbit, B, KB, MB, GB, TB), "
                            "got \"",
                            text, "\""));
}

double parse_duration(const std::string& field, const std::string& text) {
  static const std::vector<std::pair<std::string, double>> kUnits = {
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}};
  double number = 0;
  std::string unit;
  if (split_quantity(text, number, unit) && unit.find('/') == std::string::npos)
    for (const auto& [name, scale] : kUnits)
      if (unit == name && number >= 0) return number * scale;
  throw ConfigError(str_cat(field,
                            " must be a duration >= 0 such as \"50us\", \"0.2ms\", \"1s\" or "
                            "\"15min\" (units: ns, us, ms, s, m or min, h), got \"",
                            text, "\""));
}

LinkSpec parse_link(const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0;;) {
    const auto comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (parts.size() > 4)
    throw ConfigError(str_cat("--link takes BANDWIDTH[,LATENCY[,OVERHEAD[,HOST_BANDWIDTH]]], got \"", text, "\""));
  LinkSpec link;
  link.text = text;
  link.bits_per_second = parse_bandwidth("--link bandwidth", parts[0]);
  link.latency_given = parts.size() > 1;
  if (parts.size() > 1) link.latency_seconds = parse_duration("--link latency", parts[1]);
  if (parts.size() > 2) link.overhead_seconds = parse_duration("--link overhead", parts[2]);
  if (parts.size() > 3) link.host_bits_per_second = parse_bandwidth("--link host bandwidth", parts[3]);
  return link;
}

double LinkSpec::payload_rate() const {
  const double payload = bits_per_second * payload_fraction;
  return host_bits_per_second > 0 ? std::min(payload, host_bits_per_second) : payload;
}

double LinkSpec::project(double messages, double link_bytes) const {
  return messages * (latency_seconds + overhead_seconds) + 8.0 * link_bytes / payload_rate();
}

LinkSpec LinkSpec::at(double seconds) const {
  LinkSpec now = *this;
  now.trace.clear();
  for (const LinkChange& change : trace) {
    if (change.at_seconds > seconds) break;
    now.bits_per_second = change.bits_per_second;
    now.latency_seconds = change.latency_seconds.value_or(latency_seconds);
  }
  return now;
}

double LinkSpec::project_at(double seconds, double messages, double link_bytes) const {
  if (trace.empty()) return project(messages, link_bytes);
  const LinkSpec first = at(seconds);
  double spent = messages * (first.latency_seconds + overhead_seconds);
  double bits = 8.0 * link_bytes;
  // The bytes move at each rate of the trace in turn: a change at most once each.
  for (double clock = seconds + spent;;) {
    const LinkSpec here = at(clock);
    const auto next = std::find_if(trace.begin(), trace.end(), [&](const LinkChange& c) { return c.at_seconds > clock; });
    const double rate = here.payload_rate();
    if (next == trace.end() || bits <= rate * (next->at_seconds - clock)) return spent + bits / rate;
    bits -= rate * (next->at_seconds - clock);
    spent += next->at_seconds - clock;
    clock = next->at_seconds;
  }
}

}  // namespace laconic
