#include "lua/overrides.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "engine/core/error.hpp"
#include "lua/constructors.hpp"
#include "lua/experiment_table.hpp"
#include "lua/fields.hpp"

namespace laconic::lua {
namespace {

/// "{4,4}" (or "{4, 4}") a list of ints, or nothing where an item is not one.
std::optional<std::vector<std::int64_t>> parse_int_list(const std::string& text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  std::vector<std::int64_t> out;
  std::string items = text.substr(1, text.size() - 2);
  std::erase(items, ' ');
  for (std::size_t begin = 0; begin < items.size();) {
    const std::size_t end = std::min(items.find(',', begin), items.size());
    const std::string item = items.substr(begin, end - begin);
    char* stop = nullptr;
    errno = 0;
    const long long n = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || errno != 0 || stop != item.c_str() + item.size()) return std::nullopt;
    out.push_back(n);
    begin = end + 1;
  }
  return out;
}

/// "4" is an int, "0.05" and "1e-3" numbers, "true" / "false" bools, "{4,4}" a list of ints,
/// anything else text.
Value parse_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (auto list = parse_int_list(text)) return std::move(*list);
  if (!text.empty()) {
    errno = 0;
    char* end = nullptr;
    const long long integer = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end == text.c_str() + text.size()) return static_cast<std::int64_t>(integer);
    errno = 0;
    const double number = std::strtod(text.c_str(), &end);
    if (errno == 0 && end == text.c_str() + text.size()) return number;
  }
  return text;
}

const ComponentInfo& info_of(const LoadContext& context, const std::string& kind, const std::string& name) {
  for (const ComponentInfo& info : context.constructors)
    if (info.kind == kind && info.name == name) return info;
  std::string known;
  for (const ComponentInfo& info : context.constructors)
    if (info.kind == kind) known += (known.empty() ? "" : ", ") + info.name;
  throw ConfigError(str_cat("unknown ", kind, " '", name, "'; known: ", known));
}

/// The component as built from `fields` (its written ones, one changed), keeping what named it.
Component rebuilt(const LoadContext& context, const Component& old, const std::string& field, const Value& value) {
  std::vector<std::pair<std::string, LuaItem>> fields;
  for (const auto& [name, written] : old.written.fields)
    if (name != field && !std::holds_alternative<NestedComponent>(written)) fields.emplace_back(name, written);
  fields.emplace_back(field, value);
  Component out = build_component(context, info_of(context, old.written.kind, old.written.name), fields);
  // Nested components (chain's parts) stay as they were written.
  for (const auto& [name, written] : old.written.fields)
    if (name != field && std::holds_alternative<NestedComponent>(written)) out.written.fields[name] = written;
  if (!out.written.fields.empty()) out.resolved = context.catalog.resolve(out.written);
  out.written_order = written_order_of(info_of(context, old.written.kind, old.written.name), out.written);
  out.swept_fields = old.swept_fields;
  out.location = old.location;
  return out;
}

/// The component with a field of one of its nested components changed (`network.between.bandwidth`
/// is `between`'s `bandwidth` in cluster { }): the nested one rebuilt from what it was (written or
/// its default), the outer one keeping the rest. Nothing when `nested_field` is no nested
/// component's field of it, or `path`'s field is none of that component's.
std::optional<Component> rebuilt_nested(const LoadContext& context, const Component& old, const std::string& nested_field,
                                        const std::string& path, const Value& value) {
  const auto written = old.written.fields.find(nested_field);
  const Value* current = written != old.written.fields.end() ? &written->second : nullptr;
  if (current == nullptr)
    if (const auto resolved = old.resolved.fields.find(nested_field); resolved != old.resolved.fields.end())
      current = &resolved->second;
  const auto* inner = current ? std::get_if<NestedComponent>(current) : nullptr;
  if (inner == nullptr) return std::nullopt;
  Component inner_old;
  inner_old.written = *inner->spec;
  inner_old.resolved = context.catalog.resolve(inner_old.written);
  const ComponentInfo& info = info_of(context, inner_old.written.kind, inner_old.written.name);
  if (std::none_of(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == path; }))
    return std::nullopt;
  const Component inner_new = rebuilt(context, inner_old, path, value);
  Component out = old;
  out.written.fields[nested_field] = nested(inner_new.written);
  out.resolved = context.catalog.resolve(out.written);
  out.written_order = written_order_of(info_of(context, old.written.kind, old.written.name), out.written);
  return out;
}

bool has_field(const LoadContext& context, const Component& component, const std::string& field) {
  const ComponentInfo& info = info_of(context, component.written.kind, component.written.name);
  return std::any_of(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == field; });
}

std::vector<std::int64_t> parse_override_seeds(const std::string& text) {
  std::vector<std::int64_t> seeds;
  std::string list = text;
  std::erase_if(list, [](char c) { return c == '{' || c == '}' || c == ' '; });
  for (std::size_t begin = 0; begin <= list.size();) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const Value value = parse_value(list.substr(begin, end - begin));
    const auto* seed = std::get_if<std::int64_t>(&value);
    if (seed == nullptr) throw ConfigError(str_cat("seeds must be integers such as 1,2,3, got '", text, "'"));
    if (std::find(seeds.begin(), seeds.end(), *seed) != seeds.end())
      throw ConfigError(str_cat("seeds lists seed ", *seed, " twice"));
    seeds.push_back(*seed);
    begin = end + 1;
  }
  return seeds;
}

std::int64_t positive_count(const std::string& key, const std::string& text) {
  const Value value = parse_value(text);
  const auto* count = std::get_if<std::int64_t>(&value);
  if (count == nullptr || *count < 1) throw ConfigError(str_cat(key, " must be an int >= 1, got '", text, "'"));
  return *count;
}

/// The alternatives a component field has now: the file's, or the default it omitted.
std::vector<Choice> components_of(const LoadContext& context, const ExperimentDraft& draft,
                                  const ExperimentField& field) {
  if (const auto it = draft.fields.find(field.name); it != draft.fields.end()) return it->second.alternatives;
  Component component;
  component.written = ComponentSpec{field.run->kind, field.run->default_component, {}};
  component.resolved = context.catalog.resolve(component.written);
  return {component};
}

void apply_one(const LoadContext& context, ExperimentDraft& draft, const std::string& key, const std::string& text) {
  if (key == "name") {
    if (text.empty()) throw ConfigError("name must be a non-empty string");
    draft.name = text;
    return;
  }
  if (key == "seeds") {
    draft.seeds = parse_override_seeds(text);
    return;
  }
  if (key == "runs_per_seed") {
    draft.runs_per_seed = positive_count(key, text);
    return;
  }
  if (key == "repeats") {
    const std::int64_t count = positive_count(key, text);
    draft.seeds.clear();
    for (std::int64_t seed = 1; seed <= count; ++seed) draft.seeds.push_back(seed);
    return;
  }
  const std::size_t dot = key.find('.');
  const std::string head = key.substr(0, dot);
  const ExperimentField* field = find_experiment_field(head);
  if (field == nullptr || field->type == ExperimentFieldType::String || field->type == ExperimentFieldType::IntList)
    throw ConfigError(unknown_experiment_field(head));
  const Value value = parse_value(text);
  if (dot == std::string::npos) {
    Choice choice = value;
    if (field->type == ExperimentFieldType::Component) {
      Component component;
      const ComponentInfo& info = info_of(context, field->run->kind, text);
      component = build_component(context, info, {});
      choice = component;
    }
    // A field the file swept stays named in the runs' names when --set gives it one value: the
    // run is one of the sweep's kind (compressor=qsgd,levels=4,seed=1, not seed=1).
    const bool was_swept = draft.fields.count(head) > 0 && draft.fields.at(head).swept;
    draft.fields[head] = FieldChoices{{check_choice(context, *field, choice, " (--set)")}, was_swept, "", {}, {}};
    return;
  }
  if (field->type != ExperimentFieldType::Component)
    throw ConfigError(str_cat("'", head, "' is a ", field->type == ExperimentFieldType::Choice ? "choice" : "number",
                              ", not a component: write ", head, "=VALUE"));
  const std::string sub = key.substr(dot + 1);
  std::vector<Choice> alternatives = components_of(context, draft, *field);
  std::size_t changed = 0;
  std::string names;
  for (Choice& choice : alternatives) {
    const Component& component = std::get<Component>(choice);
    names += (names.empty() ? "" : ", ") + component.written.name;
    if (const std::size_t inner = sub.find('.'); inner != std::string::npos) {
      if (auto out = rebuilt_nested(context, component, sub.substr(0, inner), sub.substr(inner + 1), value)) {
        choice = std::move(*out);
        ++changed;
      }
      continue;
    }
    if (!has_field(context, component, sub)) continue;
    choice = rebuilt(context, component, sub, value);
    ++changed;
  }
  if (changed == 0)
    throw ConfigError(str_cat("no ", field->run->kind, " of field '", head, "' has a field '", sub, "' (", names,
                              "; laconic list ", field->run->kind, " shows their fields)"));
  FieldChoices& choices = draft.fields[head];
  choices.alternatives = std::move(alternatives);
}

}  // namespace

void apply_overrides(const LoadContext& context, ExperimentDraft& draft, const std::vector<std::string>& overrides) {
  for (const std::string& override : overrides) {
    const std::size_t equals = override.find('=');
    if (equals == std::string::npos || equals == 0)
      throw ConfigError(str_cat("--set takes KEY=VALUE (epochs=1, network.bandwidth=100Mbit), got '", override, "'"));
    const std::string key = override.substr(0, equals), text = override.substr(equals + 1);
    try {
      apply_one(context, draft, key, text);
    } catch (ConfigError& e) {
      e.add_context(str_cat("--set ", override));
      throw;
    }
  }
}

}  // namespace laconic::lua
