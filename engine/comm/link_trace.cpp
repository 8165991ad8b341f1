#include "engine/comm/link_trace.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "engine/core/error.hpp"

namespace laconic::comm {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  for (char c : line + ",") {
    if (c != ',') {
      if (!std::isspace(static_cast<unsigned char>(c))) field += c;
      continue;
    }
    fields.push_back(field);
    field.clear();
  }
  return fields;
}

double trace_time(const std::string& where, const std::string& text) {
  const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
  return parse_duration(where + " time", bare ? text + "s" : text);
}

}  // namespace

std::vector<LinkChange> read_link_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(str_cat("link trace ", path, " cannot be read"));
  std::vector<LinkChange> trace;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> fields = split_fields(line);
    if (fields.size() == 1 && fields[0].empty()) continue;
    if (trace.empty() && !fields[0].empty() && std::isalpha(static_cast<unsigned char>(fields[0][0]))) continue;
    const std::string where = str_cat(path, ":", number);
    if (fields.size() < 2 || fields.size() > 3)
      throw ConfigError(str_cat(where, ": a change is TIME,BANDWIDTH[,LATENCY] (\"60s,100Mbit\"), got \"", line, "\""));
    LinkChange change;
    change.at_seconds = trace_time(where, fields[0]);
    change.bits_per_second = parse_bandwidth(where + " bandwidth", fields[1]);
    if (fields.size() == 3 && !fields[2].empty()) change.latency_seconds = parse_duration(where + " latency", fields[2]);
    if (!trace.empty() && change.at_seconds <= trace.back().at_seconds)
      throw ConfigError(str_cat(where, ": times must rise, ", fields[0], " does not follow ",
                                trace.back().at_seconds, " s"));
    trace.push_back(change);
  }
  if (trace.empty()) throw ConfigError(str_cat("link trace ", path, " has no change (TIME,BANDWIDTH[,LATENCY] lines)"));
  return trace;
}

std::string describe_trace(const std::vector<LinkChange>& trace) {
  if (trace.empty()) return "no changes";
  const auto [low, high] = std::minmax_element(trace.begin(), trace.end(), [](const LinkChange& a, const LinkChange& b) {
    return a.bits_per_second < b.bits_per_second;
  });
  return str_cat(trace.size(), trace.size() == 1 ? " change" : " changes", " from ", trace.front().at_seconds,
                 " s to ", trace.back().at_seconds, " s, ", low->bits_per_second / 1e6, " to ",
                 high->bits_per_second / 1e6, " Mbit/s");
}

}  // namespace laconic::comm
