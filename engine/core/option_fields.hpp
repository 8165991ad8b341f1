#pragma once
// An options struct's fields, each declared once: the member it fills, its meaning, and the
// range or the values it accepts. Its default is the member's initializer. From the one
// declaration come the field table (`laconic list`, docs/dsl.md), the reading of a resolved spec
// and the messages for values out of range, named after the component that was registered
// ("qsgd.levels must be in [1, 65535], got 0").
//
//   OptionFields<QsgdOptions> QsgdOptions::fields() {
//     return OptionFields<QsgdOptions>()
//         .integer("levels", &QsgdOptions::levels, "quantization levels per bucket", closed(1, 65535))
//         .text("coding", &QsgdOptions::coding, "how levels are coded", {"fixed", "elias"});
//   }
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/core/error.hpp"
#include "engine/core/step_value.hpp"

namespace laconic {

/// The interval a number must lie in; an end left out is unbounded. NaN is never inside.
struct Bounds {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  /// Infinite values are refused although no end is finite ("in (0, inf)").
  bool finite = false;

  /// False for the unbounded default (any number but NaN).
  bool bounded() const;
  bool contains(double value) const;
  /// As messages and docs write it: "in [1, 16]", "in (0, 1]", ">= 0", "> 0", "in [0, inf)".
  std::string text() const;
};

/// [lo, inf): ">= lo".
Bounds at_least(double lo);
/// (lo, inf): "> lo".
Bounds above(double lo);
/// [lo, hi].
Bounds closed(double lo, double hi);
/// [lo, hi).
Bounds closed_open(double lo, double hi);
/// (lo, hi].
Bounds open_closed(double lo, double hi);
/// (lo, inf) or [lo, inf) without infinity itself: "in (lo, inf)".
Bounds finite_above(double lo);
Bounds finite_at_least(double lo);

/// `<component>.<field> must be <what>, got <value>`, the one shape of a range message.
ConfigError out_of_range(const ComponentSpec& spec, const std::string& field, const std::string& what,
                         const std::string& got);
/// "\"a\", \"b\"" for messages; "one of \"a\", \"b\"".
std::string quoted_choices(const std::vector<std::string>& allowed);

/// How a member of a type of its own is a field: a specialisation provides
///   static FieldSpec spec(std::string name, const T& fallback, std::string doc);
///   static T read(const ComponentSpec& spec, const std::string& name);  // checks, ConfigError
template <class T>
struct FieldCodec;

template <class Options>
class OptionFields {
 public:
  /// A rule over the whole struct, run after every field was read (cross-field checks, derived
  /// members); `spec` names the component in messages.
  using Rule = std::function<void(const ComponentSpec& spec, Options&)>;

  OptionFields& flag(std::string name, bool Options::*member, std::string doc) {
    return add(
        {std::move(name), FieldType::Bool, defaults().*member, std::move(doc)},
        [member](const ComponentSpec& spec, const std::string& field, Options& o) { o.*member = spec.flag(field); });
  }

  OptionFields& integer(std::string name, std::int64_t Options::*member, std::string doc, Bounds bounds = {}) {
    return add({std::move(name), FieldType::Int, defaults().*member, with_bounds(std::move(doc), bounds)},
               [member, bounds](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = spec.integer(field);
                 if (!bounds.contains(static_cast<double>(o.*member)))
                   throw out_of_range(spec, field, bounds.text(), str_cat(o.*member));
               });
  }

  OptionFields& number(std::string name, double Options::*member, std::string doc, Bounds bounds = {}) {
    return add({std::move(name), FieldType::Number, defaults().*member, with_bounds(std::move(doc), bounds)},
               [member, bounds](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = spec.number(field);
                 if (!bounds.contains(o.*member)) throw out_of_range(spec, field, bounds.text(), str_cat(o.*member));
               });
  }

  /// A string; with `allowed`, one of those ("qsgd.coding must be one of \"fixed\", \"elias\"").
  OptionFields& text(std::string name, std::string Options::*member, std::string doc,
                     std::vector<std::string> allowed = {}) {
    std::string described = allowed.empty() ? doc : str_cat(doc, ", one of ", quoted_choices(allowed));
    return add({std::move(name), FieldType::String, defaults().*member, std::move(described)},
               [member, allowed](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = spec.text(field);
                 if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), o.*member) == allowed.end())
                   throw out_of_range(spec, field, str_cat("one of ", quoted_choices(allowed)),
                                      str_cat("\"", o.*member, "\""));
               });
  }

  /// A string naming one of an enum's values: `choices` pairs each value with its spelling.
  template <class Enum>
  OptionFields& choice(std::string name, Enum Options::*member, std::string doc,
                       std::vector<std::pair<Enum, std::string>> choices) {
    std::string spelled;
    std::vector<std::string> all;
    for (const auto& [value, text] : choices) {
      if (value == defaults().*member) spelled = text;
      all.push_back(text);
    }
    return add({std::move(name), FieldType::String, spelled, str_cat(doc, ", one of ", quoted_choices(all))},
               [member, choices](const ComponentSpec& spec, const std::string& field, Options& o) {
                 const std::string& given = spec.text(field);
                 std::vector<std::string> allowed;
                 for (const auto& [value, text] : choices) {
                   if (text == given) {
                     o.*member = value;
                     return;
                   }
                   allowed.push_back(text);
                 }
                 throw out_of_range(spec, field, str_cat("one of ", quoted_choices(allowed)),
                                    str_cat("\"", given, "\""));
               });
  }

  OptionFields& integers(std::string name, std::vector<std::int64_t> Options::*member, std::string doc) {
    return add({std::move(name), FieldType::IntList, defaults().*member, std::move(doc)},
               [member](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = spec.integers(field);
               });
  }

  OptionFields& numbers(std::string name, std::vector<double> Options::*member, std::string doc) {
    return add(
        {std::move(name), FieldType::NumberList, defaults().*member, std::move(doc)},
        [member](const ComponentSpec& spec, const std::string& field, Options& o) { o.*member = spec.numbers(field); });
  }

  /// A nested component of the same registry.
  OptionFields& component(std::string name, ComponentSpec Options::*member, std::string doc) {
    return add({std::move(name), FieldType::Component, nested(defaults().*member), std::move(doc)},
               [member](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = spec.component(field);
               });
  }

  /// A nested component of another registry's kind (diloco's `outer` optimizer): its default,
  /// the member's initializer, names that kind; the registry resolves it with the resolver it
  /// was given for the kind (Registry::resolve_nested_with).
  OptionFields& component_of(std::string kind, std::string name, ComponentSpec Options::*member, std::string doc) {
    LACONIC_ENFORCE((defaults().*member).kind == kind,
                    str_cat("the default of ", name, " must be a ", kind, ", got '", (defaults().*member).kind, "'"));
    FieldSpec spec{std::move(name), FieldType::Component, nested(defaults().*member), std::move(doc)};
    spec.component_kind = std::move(kind);
    return add(std::move(spec), [member](const ComponentSpec& spec, const std::string& field, Options& o) {
      o.*member = spec.component(field);
    });
  }

  /// A number or the experiment file's function of (epoch, step) (FieldSpec::per_step); a
  /// constant is checked against `bounds` here, a function's values where it is evaluated.
  OptionFields& step_value(std::string name, StepValue Options::*member, std::string doc, Bounds bounds = {}) {
    return add_step_value(FieldType::Number, std::move(name), member, std::move(doc), bounds);
  }

  /// The same for a count: a constant must be an int (`period = 2.5` is refused).
  OptionFields& step_integer(std::string name, StepValue Options::*member, std::string doc, Bounds bounds = {}) {
    return add_step_value(FieldType::Int, std::move(name), member, std::move(doc), bounds);
  }

  /// Two numbers written as one list (`betas = {0.9, 0.999}`), each within `each`.
  OptionFields& number_pair(std::string name, double Options::*first, double Options::*second, std::string doc,
                            Bounds each) {
    const std::vector<double> fallback{defaults().*first, defaults().*second};
    std::string described = each.bounded() ? str_cat(doc, ", each ", each.text()) : doc;
    return add({std::move(name), FieldType::NumberList, fallback, std::move(described)},
               [first, second, each](const ComponentSpec& spec, const std::string& field, Options& o) {
                 const std::vector<double> pair = spec.numbers(field);
                 if (pair.size() != 2 || !each.contains(pair[0]) || !each.contains(pair[1]))
                   throw out_of_range(spec, field, str_cat("two numbers ", each.text()), format_value(Value{pair}));
                 o.*first = pair[0];
                 o.*second = pair[1];
               });
  }

  /// A member of a type this table does not know (a sparsifier's StepRatio), described and read
  /// by FieldCodec<T>.
  template <class T>
  OptionFields& field(std::string name, T Options::*member, std::string doc) {
    return add(FieldCodec<T>::spec(std::move(name), defaults().*member, std::move(doc)),
               [member](const ComponentSpec& spec, const std::string& field, Options& o) {
                 o.*member = FieldCodec<T>::read(spec, field);
               });
  }

  /// Marks the last field added: a String naming a file relative to the experiment file
  /// (FieldSpec::relative_to_file), its bytes part of the experiment's hash when `hashed`.
  OptionFields& relative_to_file(bool hashed = false) {
    LACONIC_ENFORCE(!fields_.empty(), "relative_to_file() follows the field it marks");
    fields_.back().spec.relative_to_file = true;
    fields_.back().spec.hashed = hashed;
    return *this;
  }

  OptionFields& rule(Rule check) {
    rules_.push_back(std::move(check));
    return *this;
  }

  /// The field table: names, types, defaults (the members' initializers), docs with ranges.
  std::vector<FieldSpec> specs() const {
    std::vector<FieldSpec> out;
    out.reserve(fields_.size());
    for (const Field& f : fields_) out.push_back(f.spec);
    return out;
  }
  operator std::vector<FieldSpec>() const { return specs(); }  // NOLINT: a table is its specs

  /// Reads a resolved spec (every field present), checking each field's range and then the rules.
  Options read(const ComponentSpec& spec) const {
    Options o;
    for (const Field& f : fields_) f.read(spec, f.spec.name, o);
    for (const Rule& check : rules_) check(spec, o);
    return o;
  }

 private:
  using FieldReader = std::function<void(const ComponentSpec&, const std::string&, Options&)>;
  struct Field {
    FieldSpec spec;
    FieldReader read;
  };

  static const Options& defaults() {
    static const Options instance{};
    return instance;
  }

  static std::string with_bounds(std::string doc, const Bounds& bounds) {
    if (!bounds.bounded()) return doc;
    return doc.empty() ? bounds.text() : str_cat(doc, ", ", bounds.text());
  }

  OptionFields& add_step_value(FieldType type, std::string name, StepValue Options::*member, std::string doc,
                               Bounds bounds) {
    const double fallback = (defaults().*member).constant();
    FieldSpec field{std::move(name), type,
                    type == FieldType::Int ? Value{static_cast<std::int64_t>(fallback)} : Value{fallback},
                    with_bounds(std::move(doc), bounds)};
    field.per_step = true;
    return add(std::move(field), [member, bounds](const ComponentSpec& spec, const std::string& name, Options& o) {
      o.*member = StepValue::read(spec, name);
      if (!(o.*member).varies() && !bounds.contains((o.*member).constant()))
        throw out_of_range(spec, name, bounds.text(), str_cat((o.*member).constant()));
    });
  }

  OptionFields& add(FieldSpec spec, FieldReader read) {
    for (const Field& f : fields_) LACONIC_ENFORCE(f.spec.name != spec.name, "field ", spec.name, " declared twice");
    fields_.push_back({std::move(spec), std::move(read)});
    return *this;
  }

  std::vector<Field> fields_;
  std::vector<Rule> rules_;
};

}  // namespace laconic
