#include "engine/core/value.hpp"

#include <cmath>
#include <sstream>

#include "engine/core/error.hpp"

namespace laconic {

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::Bool: return "bool";
    case FieldType::Int: return "int";
    case FieldType::Number: return "number";
    case FieldType::String: return "string";
  }
  return "?";
}

const char* value_type_name(const Value& value) {
  static const char* const kNames[] = {"bool", "int", "number", "string"};
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
  return "\"" + std::get<std::string>(value) + "\"";
}

nlohmann::json value_to_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

Value value_from_json(const nlohmann::json& json) {
  if (json.is_boolean()) return json.get<bool>();
  if (json.is_number_integer()) return json.get<std::int64_t>();
  if (json.is_number()) return json.get<double>();
  if (json.is_string()) return json.get<std::string>();
  throw ConfigError("unsupported field value in JSON: " + json.dump());
}

}  // namespace laconic
