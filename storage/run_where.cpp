#include "storage/run_where.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/suggest.hpp"

namespace laconic::storage {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The whole text as a number, or nothing ("0.01", "1e-2", "4"; not "4x", not "").
std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// Equal as written numbers: 0.01 and 1e-2 parse to the same double; the relative slack only
// absorbs a value that went through float on its way into the config.
bool same_number(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;  // inf - x is inf: no slack there
  return std::fabs(a - b) <= 1e-9 * std::fmax(std::fabs(a), std::fabs(b));
}

bool ordered(double stored, WhereOp op, double wanted) {
  switch (op) {
    case WhereOp::Less:
      return stored < wanted && !same_number(stored, wanted);
    case WhereOp::LessEqual:
      return stored < wanted || same_number(stored, wanted);
    case WhereOp::Greater:
      return stored > wanted && !same_number(stored, wanted);
    case WhereOp::GreaterEqual:
      return stored > wanted || same_number(stored, wanted);
    default:
      return false;
  }
}

bool equal_matches(const nlohmann::json& stored, const std::string& wanted);

// Whether the stored value satisfies the condition.
bool value_matches(const nlohmann::json& stored, const WhereCondition& condition) {
  if (condition.op == WhereOp::Equal) return equal_matches(stored, condition.value);
  if (condition.op == WhereOp::NotEqual) return !equal_matches(stored, condition.value);
  const auto wanted = as_number(condition.value);
  return stored.is_number() && wanted && ordered(stored.get<double>(), condition.op, *wanted);
}

bool equal_matches(const nlohmann::json& stored, const std::string& wanted) {
  if (stored.is_object() && stored.contains("name")) return equal_matches(stored["name"], wanted);
  if (stored.is_number()) {
    const auto number = as_number(wanted);
    return number && same_number(stored.get<double>(), *number);
  }
  if (stored.is_boolean()) return (stored.get<bool>() ? "true" : "false") == wanted;
  if (stored.is_string()) return stored.get<std::string>() == wanted;
  return stored.dump() == wanted;  // arrays: [784,392] as JSON text
}

bool last_part_is(const std::string& path, const std::string& key) {
  return path.size() > key.size() && path.ends_with(key) && path[path.size() - key.size() - 1] == '.';
}

void flatten_into(const nlohmann::json& value, const std::string& prefix,
                  std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (!value.is_object()) {
    out.emplace_back(prefix, value);
    return;
  }
  for (const auto& [key, child] : value.items()) flatten_into(child, prefix.empty() ? key : prefix + "." + key, out);
}

// The config object at a dotted path, or nullptr.
const nlohmann::json* at_path(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* node = &root;
  std::size_t from = 0;
  while (true) {
    const auto dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
    if (dot == std::string::npos) return node;
    from = dot + 1;
  }
}

}  // namespace

namespace {

const char* op_text(WhereOp op) {
  switch (op) {
    case WhereOp::Equal:
      return "=";
    case WhereOp::NotEqual:
      return "!=";
    case WhereOp::Less:
      return "<";
    case WhereOp::LessEqual:
      return "<=";
    case WhereOp::Greater:
      return ">";
    default:
      return ">=";
  }
}

}  // namespace

std::string WhereCondition::text() const { return key + op_text(op) + value; }

WhereCondition parse_where(const std::string& text) {
  const auto at = text.find_first_of("=!<>");
  if (at == std::string::npos)
    throw ConfigError(str_cat("--where '", text, "' is not KEY=VALUE, KEY!=VALUE or KEY<VALUE (<=, >, >=) ",
                              "(e.g. compressor=topk, ratio=0.01, test_accuracy>0.85)"));
  WhereCondition condition;
  std::size_t length = 1;
  const bool then_equal = at + 1 < text.size() && text[at + 1] == '=';
  switch (text[at]) {
    case '=':
      condition.op = WhereOp::Equal;
      break;
    case '!':
      if (!then_equal) throw ConfigError(str_cat("--where '", text, "': '!' must be followed by '=' (KEY!=VALUE)"));
      condition.op = WhereOp::NotEqual;
      length = 2;
      break;
    case '<':
      condition.op = then_equal ? WhereOp::LessEqual : WhereOp::Less;
      length = then_equal ? 2 : 1;
      break;
    default:
      condition.op = then_equal ? WhereOp::GreaterEqual : WhereOp::Greater;
      length = then_equal ? 2 : 1;
  }
  condition.key = trim(text.substr(0, at));
  condition.value = trim(text.substr(at + length));
  if (condition.key.empty() || condition.value.empty())
    throw ConfigError(str_cat("--where '", text, "' needs both a key and a value (e.g. compressor=topk)"));
  const bool ordering = condition.op != WhereOp::Equal && condition.op != WhereOp::NotEqual;
  if (ordering && !as_number(condition.value))
    throw ConfigError(str_cat("--where '", text, "': ", op_text(condition.op), " compares numbers, and '",
                              condition.value, "' is not one"));
  return condition;
}

std::vector<std::pair<std::string, nlohmann::json>> flatten_json(const nlohmann::json& object) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  flatten_into(object, "", out);
  return out;
}

WhereLookup match_where(const WhereCondition& condition, const nlohmann::json& swept, const nlohmann::json& config) {
  const std::string& key = condition.key;
  if (swept.is_object() && swept.contains(key)) return {true, value_matches(swept[key], condition)};
  WhereLookup lookup;
  if (swept.is_object())
    for (const auto& [path, value] : swept.items())
      if (last_part_is(path, key)) {
        lookup.found = true;
        lookup.matched = lookup.matched || value_matches(value, condition);
      }
  if (lookup.found) return lookup;
  // The config repeats the swept variables under "swept"; they were looked at above.
  if (!key.starts_with("swept")) {
    if (const nlohmann::json* node = at_path(config, key)) return {true, value_matches(*node, condition)};
  }
  for (const auto& [path, value] : flatten_json(config)) {
    if (path.starts_with("swept.") || !last_part_is(path, key)) continue;
    lookup.found = true;
    lookup.matched = lookup.matched || value_matches(value, condition);
  }
  return lookup;
}

std::vector<RunRow> filter_where(const std::vector<RunRow>& runs, const std::vector<WhereCondition>& conditions,
                                 const FinalMetric& final_metric) {
  if (conditions.empty()) return runs;
  std::vector<bool> key_found(conditions.size(), false);
  std::vector<RunRow> kept;
  std::set<std::string> swept_keys;
  for (const RunRow& run : runs) {
    const auto swept = nlohmann::json::parse(run.swept, nullptr, false);
    const auto config = nlohmann::json::parse(run.config, nullptr, false);
    if (swept.is_object())
      for (const auto& [key, value] : swept.items()) swept_keys.insert(key);
    bool all = true;
    for (std::size_t c = 0; c < conditions.size(); ++c) {
      WhereLookup lookup = match_where(conditions[c], swept, config);
      if (!lookup.found && final_metric) {
        if (const auto value = final_metric(conditions[c].key, run.id)) {
          lookup.found = true;
          lookup.matched = !std::isnan(*value) && value_matches(nlohmann::json(*value), conditions[c]);
        }
      }
      key_found[c] = key_found[c] || lookup.found;
      all = all && lookup.matched;
    }
    if (all) kept.push_back(run);
  }
  for (std::size_t c = 0; c < conditions.size(); ++c) {
    if (key_found[c] || runs.empty()) continue;
    std::string known;
    for (const auto& key : swept_keys) known += (known.empty() ? "" : ", ") + key;
    // Did you mean: the swept variables, and the config's paths (compressor.ratio) and their last parts.
    std::vector<std::string> candidates(swept_keys.begin(), swept_keys.end());
    for (const auto& [path, value] : flatten_json(nlohmann::json::parse(runs.front().config, nullptr, false))) {
      if (path.starts_with("swept.")) continue;
      candidates.push_back(path);
      candidates.push_back(path.substr(path.rfind('.') + 1));
    }
    const std::string close = closest_name(conditions[c].key, candidates);
    throw ConfigError(
        str_cat("--where ", conditions[c].text(), ": no run has a ",
                final_metric ? "swept variable, config field or metric '" : "swept variable or config field '",
                conditions[c].key, "'", close.empty() ? std::string() : "; did you mean '" + close + "'?",
                "; swept variables: ", known.empty() ? "(none)" : known,
                "; config fields are paths such as compressor, compressor.ratio, optimizer.lr, "
                "workers, batch_size (see laconic show RUN)"));
  }
  return kept;
}

std::vector<RunRow> runs_where(Database& db, const RunFilter& filter, const std::vector<std::string>& conditions) {
  std::vector<WhereCondition> parsed;
  for (const std::string& text : conditions) parsed.push_back(parse_where(text));
  // Keys neither swept nor configured are final metrics: one run_summary lookup per key.
  std::map<std::string, std::map<std::int64_t, Summary>> finals;
  const FinalMetric final_metric = [&](const std::string& key, std::int64_t run_id) -> std::optional<double> {
    auto it = finals.find(key);
    if (it == finals.end()) it = finals.emplace(key, summaries_of_key(db, key)).first;
    const auto found = it->second.find(run_id);
    if (found == it->second.end()) return std::nullopt;
    return found->second.last;
  };
  return filter_where(list_runs(db, filter), parsed, final_metric);
}

std::vector<std::string> split_where_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, comma - start);
    const auto first = part.find_first_not_of(" \t");
    if (first != std::string::npos) out.push_back(part.substr(first, part.find_last_not_of(" \t") - first + 1));
    start = comma + 1;
  }
  return out;
}

}  // namespace laconic::storage
