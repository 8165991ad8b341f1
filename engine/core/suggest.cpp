#include "engine/core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace laconic {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with_ignoring_case(const std::string& text, const std::string& prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(text[i]) != lower(prefix[i])) return false;
  return true;
}

}  // namespace

std::size_t name_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.empty()) return "";
  std::string best;
  // A prefix of one or two letters fits too many names to mean one of them.
  if (name.size() >= 3)
    for (const auto& candidate : candidates)
      if (candidate != name && starts_with_ignoring_case(candidate, name) &&
          (best.empty() || candidate.size() < best.size()))
        best = candidate;
  if (!best.empty()) return best;
  std::size_t best_distance = name.size() >= 9 ? 4 : 3;  // only names this close are suggested
  for (const auto& candidate : candidates) {
    if (candidate == name) continue;
    const std::size_t d = name_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace laconic
