#include "engine/core/component.hpp"

#include "engine/core/error.hpp"
#include "engine/core/suggest.hpp"

namespace laconic {

const Value& ComponentSpec::at(const std::string& field) const {
  auto it = fields.find(field);
  if (it == fields.end()) throw ConfigError(str_cat(name, ".", field, " is not set"));
  return it->second;
}

bool ComponentSpec::flag(const std::string& field) const {
  const Value& v = at(field);
  if (auto b = std::get_if<bool>(&v)) return *b;
  throw ConfigError(str_cat(name, ".", field, " must be a bool, got ", format_value(v)));
}

std::int64_t ComponentSpec::integer(const std::string& field) const {
  const Value& v = at(field);
  if (auto i = std::get_if<std::int64_t>(&v)) return *i;
  throw ConfigError(str_cat(name, ".", field, " must be an int, got ", format_value(v)));
}

double ComponentSpec::number(const std::string& field) const {
  const Value& v = at(field);
  if (auto d = std::get_if<double>(&v)) return *d;
  if (auto i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw ConfigError(str_cat(name, ".", field, " must be a number, got ", format_value(v)));
}

const ComponentSpec& ComponentSpec::component(const std::string& field) const {
  const Value& v = at(field);
  if (auto c = std::get_if<NestedComponent>(&v)) return *c->spec;
  throw ConfigError(str_cat(name, ".", field, " must be a component, got ", format_value(v)));
}

const std::vector<std::int64_t>& ComponentSpec::integers(const std::string& field) const {
  const Value& v = at(field);
  if (auto list = std::get_if<std::vector<std::int64_t>>(&v)) return *list;
  throw ConfigError(str_cat(name, ".", field, " must be a list of ints, got ", format_value(v)));
}

std::vector<double> ComponentSpec::numbers(const std::string& field) const {
  const Value& v = at(field);
  if (auto list = std::get_if<std::vector<double>>(&v)) return *list;
  if (auto list = std::get_if<std::vector<std::int64_t>>(&v)) return std::vector<double>(list->begin(), list->end());
  throw ConfigError(str_cat(name, ".", field, " must be a list of numbers, got ", format_value(v)));
}

const std::string& ComponentSpec::text(const std::string& field) const {
  const Value& v = at(field);
  if (auto s = std::get_if<std::string>(&v)) return *s;
  throw ConfigError(str_cat(name, ".", field, " must be a string, got ", format_value(v)));
}

nlohmann::json ComponentSpec::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  out["name"] = name;
  for (const auto& [field, value] : fields) out[field] = value_to_json(value);
  return out;
}

ComponentSpec ComponentSpec::from_json(const std::string& kind, const nlohmann::json& json) {
  ComponentSpec spec;
  spec.kind = kind;
  if (!json.is_object() || !json.contains("name") || !json["name"].is_string())
    throw ConfigError(str_cat(kind, " must be an object with a \"name\", got ", json.dump()));
  spec.name = json["name"].get<std::string>();
  for (const auto& [field, value] : json.items())
    if (field != "name") spec.fields[field] = value_from_json(value);
  return spec;
}

namespace {

// "a schedule", "an optimizer".
std::string with_article(const std::string& noun) {
  return str_cat(!noun.empty() && std::string("aeiou").find(noun.front()) != std::string::npos ? "an " : "a ", noun);
}

bool type_accepts(FieldType type, const Value& value) {
  switch (type) {
    case FieldType::Bool:
      return std::holds_alternative<bool>(value);
    case FieldType::Int:
      return std::holds_alternative<std::int64_t>(value);
    case FieldType::Number:
      return std::holds_alternative<double>(value) || std::holds_alternative<std::int64_t>(value);
    case FieldType::String:
      return std::holds_alternative<std::string>(value);
    case FieldType::Component:
      return std::holds_alternative<NestedComponent>(value);
    case FieldType::IntList:
      return std::holds_alternative<std::vector<std::int64_t>>(value);
    case FieldType::NumberList:
      return std::holds_alternative<std::vector<double>>(value) ||
             std::holds_alternative<std::vector<std::int64_t>>(value);
  }
  return false;
}

}  // namespace

std::string ComponentInfo::unknown_field(const std::string& field, bool suggest) const {
  std::vector<std::string> known;
  for (const auto& f : fields) known.push_back(f.name);
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  const std::string near = suggest ? closest_name(field, known) : "";
  return str_cat("unknown field '", field, "' in ", kind, " '", name, "'",
                 near.empty() ? "" : str_cat(" (did you mean '", near, "'?)"), "; known: ", list.empty() ? "(none)" : list);
}

ComponentSpec ComponentInfo::resolve(const ComponentSpec& spec) const {
  ComponentSpec out;
  out.kind = kind;
  out.name = name;
  for (const auto& [field, value] : spec.fields) {
    const FieldSpec* match = nullptr;
    for (const auto& f : fields)
      if (f.name == field) match = &f;
    if (match == nullptr) throw ConfigError(unknown_field(field));
    if (std::holds_alternative<StepFunction>(value)) {
      if (!match->per_step)
        throw ConfigError(str_cat(name, ".", field, " must be ", field_type_phrase(match->type),
                                  ", got a function; only fields documented as \"or "
                                  "function(epoch, step)\" take one"));
      out.fields[field] = value;
      continue;
    }
    if (!type_accepts(match->type, value))
      throw ConfigError(str_cat(name, ".", field, " must be ", field_type_phrase(match->type), ", got ",
                                value_type_name(value), " ", format_value(value)));
    // Numbers are stored as doubles so that `ratio = 1` and `ratio = 1.0` resolve alike.
    if (match->type == FieldType::Number) {
      out.fields[field] = spec.number(field);
    } else if (match->type == FieldType::NumberList) {
      out.fields[field] = spec.numbers(field);  // {1, 1} and {1.0, 1.0} resolve alike
    } else if (match->type == FieldType::Component) {
      ComponentSpec inner = *std::get<NestedComponent>(value).spec;
      const std::string& wanted = match->component_kind.empty() ? kind : match->component_kind;
      if (inner.kind.empty()) inner.kind = wanted;
      if (inner.kind != wanted)
        throw ConfigError(str_cat(name, ".", field, " must be ", with_article(wanted), ", got ", inner.kind, " '",
                                  inner.name, "'"));
      out.fields[field] = nested(std::move(inner));
    } else {
      out.fields[field] = value;
    }
  }
  for (const auto& f : fields)
    if (!out.fields.count(f.name)) out.fields[f.name] = f.default_value;
  return out;
}

}  // namespace laconic
