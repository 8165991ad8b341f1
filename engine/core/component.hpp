#pragma once
// A named, configured instance of a pluggable thing (compressor, topology, model, ...), as the
// experiment file wrote it, and the description of the fields such a thing accepts.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/value.hpp"

namespace laconic {

/// One field a component accepts, with its default and a one-line meaning (units included).
struct FieldSpec {
  std::string name;
  FieldType type;
  Value default_value;
  std::string doc;
  /// An Int or Number field that may also be a function of (epoch, step) from the experiment
  /// file (a StepFunction value; the options struct reads it as a StepValue).
  bool per_step = false;
  /// A String field naming a file relative to the experiment file (torchscript's `file`,
  /// tensors' `train`): the Lua layer resolves it against the experiment file's directory.
  bool relative_to_file = false;
  /// With relative_to_file: the file's bytes are part of the experiment's hash, as an included
  /// file's are (a model; not a dataset, which may be large).
  bool hashed = false;
  /// A Component field: the kind of component it takes when not the owner's own (diloco's
  /// `outer` is an optimizer inside a schedule); empty for a component of the owner's kind
  /// (chain's `first`).
  std::string component_kind{};
};

/// What the user asked for: `topk { ratio = 0.01 }` is {kind "compressor", name "topk", ratio}.
struct ComponentSpec {
  std::string kind;
  std::string name;
  std::map<std::string, Value> fields;

  /// Typed accessors; a missing field or a wrong type is a ConfigError naming `kind.name.field`.
  bool flag(const std::string& field) const;
  std::int64_t integer(const std::string& field) const;
  double number(const std::string& field) const;
  const std::string& text(const std::string& field) const;
  const ComponentSpec& component(const std::string& field) const;
  const std::vector<std::int64_t>& integers(const std::string& field) const;
  /// A NumberList field (a list of ints is taken as numbers).
  std::vector<double> numbers(const std::string& field) const;

  nlohmann::json to_json() const;
  static ComponentSpec from_json(const std::string& kind, const nlohmann::json& json);

  bool operator==(const ComponentSpec& other) const = default;

  /// The value of `field` whatever its type; ConfigError when it is not set.
  const Value& at(const std::string& field) const;
};

/// The registry's description of one component: name, one-line description, fields.
struct ComponentInfo {
  std::string kind;
  std::string name;
  std::string description;
  std::vector<FieldSpec> fields;
  /// No Lua constructor: the DSL sets it itself (lr_schedule's `lua_function`, which stands for
  /// a function written in the file).
  bool internal = false;

  /// Checks field names and types and fills defaults. Unknown fields and wrong types are
  /// ConfigErrors that name the field, the value and what is valid.
  ComponentSpec resolve(const ComponentSpec& spec) const;

  /// "unknown field 'rato' in compressor 'topk'; known: ratio, ...": what resolve() and the Lua
  /// constructors say of a field it does not have; with `suggest`, the nearest field's name after
  /// the component's ("... 'topk' (did you mean 'ratio'?); known: ...").
  std::string unknown_field(const std::string& field, bool suggest = false) const;
};

}  // namespace laconic
