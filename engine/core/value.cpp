#include "engine/core/value.hpp"

#include <cmath>
#include <sstream>
#include <type_traits>

#include "engine/core/component.hpp"
#include "engine/core/error.hpp"

namespace laconic {

std::string field_type_phrase(FieldType type) {
  const std::string name = field_type_name(type);
  return (type == FieldType::Int ? "an " : "a ") + name;
}

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::Bool:
      return "bool";
    case FieldType::Int:
      return "int";
    case FieldType::Number:
      return "number";
    case FieldType::String:
      return "string";
    case FieldType::Component:
      return "component";
    case FieldType::IntList:
      return "list of ints";
    case FieldType::NumberList:
      return "list of numbers";
  }
  return "?";
}

const char* value_type_name(const Value& value) {
  if (std::holds_alternative<std::vector<std::int64_t>>(value)) return "list of ints";
  if (std::holds_alternative<std::vector<double>>(value)) return "list of numbers";
  if (std::holds_alternative<StepFunction>(value)) return "function";
  static const char* const kNames[] = {"bool", "int", "number", "string", "component"};
  return kNames[value.index()];
}

std::string format_value(const Value& value) {
  if (auto b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (auto i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&value)) {
    std::ostringstream out;
    out.precision(15);
    out << *d;
    return out.str();
  }
  if (auto text = std::get_if<std::string>(&value)) return "\"" + *text + "\"";
  if (auto function = std::get_if<StepFunction>(&value)) return "function@" + function->id;
  if (auto list = std::get_if<std::vector<std::int64_t>>(&value)) {
    std::string out = "{";
    for (std::size_t i = 0; i < list->size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string((*list)[i]);
    return out + "}";
  }
  if (auto list = std::get_if<std::vector<double>>(&value)) {
    std::string out = "{";
    for (std::size_t i = 0; i < list->size(); ++i) out += (i == 0 ? "" : ", ") + format_value(Value{(*list)[i]});
    return out + "}";
  }
  const ComponentSpec& spec = *std::get<NestedComponent>(value).spec;
  if (spec.fields.empty()) return spec.name + " {}";
  std::string out = spec.name + " {";
  for (const auto& [field, v] : spec.fields) out += " " + field + " = " + format_value(v) + ",";
  out.back() = ' ';
  return out + "}";
}

bool NestedComponent::operator==(const NestedComponent& other) const {
  if (spec == nullptr || other.spec == nullptr) return spec == other.spec;
  return *spec == *other.spec;
}

Value nested(ComponentSpec spec) { return NestedComponent{std::make_shared<const ComponentSpec>(std::move(spec))}; }

nlohmann::json value_to_json(const Value& value) {
  if (const auto* component = std::get_if<NestedComponent>(&value)) return component->spec->to_json();
  if (const auto* function = std::get_if<StepFunction>(&value)) return nlohmann::json{{"function", function->id}};
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, NestedComponent> || std::is_same_v<V, StepFunction>)
          return nullptr;  // handled above
        else
          return nlohmann::json(v);
      },
      value);
}

Value value_from_json(const nlohmann::json& json) {
  if (json.is_boolean()) return json.get<bool>();
  if (json.is_number_integer()) return json.get<std::int64_t>();
  if (json.is_number()) return json.get<double>();
  if (json.is_string()) return json.get<std::string>();
  if (json.is_object() && json.size() == 1 && json.contains("function") && json["function"].is_string())
    return StepFunction{json["function"].get<std::string>()};
  if (json.is_object()) return nested(ComponentSpec::from_json("", json));
  if (json.is_array()) {
    bool integers = true;
    for (const auto& item : json) {
      if (!item.is_number()) throw ConfigError("a list field value in JSON must hold numbers only, got " + json.dump());
      integers = integers && item.is_number_integer();
    }
    if (!integers) return json.get<std::vector<double>>();
    return json.get<std::vector<std::int64_t>>();
  }
  throw ConfigError("unsupported field value in JSON: " + json.dump());
}

}  // namespace laconic
