#pragma once
// Field values of pluggable components, as they come from Lua or JSON.
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace laconic {

/// The type a component field declares; Number accepts integers too. Component: another
/// component of the same kind as the field's owner (`chain { first = topk {}, ... }`).
/// IntList: a list of integers (`mlp { sizes = {784, 392, 50, 10} }`); NumberList: a list of
/// numbers (`adam { betas = {0.9, 0.999} }`).
enum class FieldType { Bool, Int, Number, String, Component, IntList, NumberList };

struct ComponentSpec;

/// A component given as a field value. Immutable and shared, compared by content.
struct NestedComponent {
  std::shared_ptr<const ComponentSpec> spec;
  bool operator==(const NestedComponent& other) const;
};

/// A function of (epoch, step) written in the experiment file where a field allows one
/// (`topk { ratio = function(epoch, step) ... end }`, FieldSpec::per_step). `id` names it
/// ("exp.lua:12"); the workers, which load the same file, evaluate it through RunCallbacks.
struct StepFunction {
  std::string id;
  bool operator==(const StepFunction& other) const = default;
};

/// One field value. Integers stay integers so that `batch_size = 64.5` can be refused.
/// A list of integers is a std::vector<std::int64_t> (FieldType::IntList), of numbers a
/// std::vector<double> (FieldType::NumberList).
using Value = std::variant<bool, std::int64_t, double, std::string, NestedComponent, std::vector<std::int64_t>,
                           StepFunction, std::vector<double>>;

/// Wraps a spec as a field value.
Value nested(ComponentSpec spec);

/// "bool", "int", "number", "string", "component", "list of ints" ("function" for a
/// StepFunction value).
const char* field_type_name(FieldType type);

/// The same with its article, for messages: "an int", "a number", "a list of ints".
std::string field_type_phrase(FieldType type);

/// The type name of what a value holds, in the same words as field_type_name().
const char* value_type_name(const Value& value);

/// A value as a user would write it in Lua: true, 64, 0.01, "ring", topk { ratio = 0.01 },
/// {784, 392, 50, 10}.
std::string format_value(const Value& value);

nlohmann::json value_to_json(const Value& value);

/// Integers in JSON become Int, other numbers Number, {"function": id} a StepFunction, other
/// objects nested components (kind left empty: the owner's registry fills it when it resolves
/// the field), arrays of integers (the empty array included) lists of ints, other arrays of
/// numbers lists of numbers.
Value value_from_json(const nlohmann::json& json);

}  // namespace laconic
