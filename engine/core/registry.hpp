#pragma once
// Registry<T>: the table of built-in implementations of one pluggable interface. Each entry is an
// options struct (its fields declared once, engine/core/option_fields.hpp) plus a class
// constructed from it; a folder's builtin.cpp registers them one line each. Duplicate names are refused.
#include <algorithm>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/core/error.hpp"
#include "engine/core/option_fields.hpp"

namespace laconic {

/// What an interface's entries say about themselves without being built: T::Traits where the
/// interface declares one (a topology's extra ranks, a schedule's staleness bound), else nothing.
struct NoTraits {
  bool operator==(const NoTraits&) const = default;
};
template <class T>
struct TraitsOf {
  using type = NoTraits;
};
template <class T>
requires requires { typename T::Traits; }
struct TraitsOf<T> {
  using type = typename T::Traits;
};

template <class T>
class Registry {
 public:
  using Traits = typename TraitsOf<T>::type;

  /// `kind` names the interface in messages: "compressor", "topology", ...
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  /// Registers Impl, built from Options. Options declares its fields once in `static
  /// OptionFields<Options> fields()` (engine/core/option_fields.hpp): the field table, the
  /// reading of a spec and its range checks come from there, the component's name in messages
  /// from this registration. Impl has a constructor taking Options. Options may provide `static
  /// void normalize(ComponentSpec&)`, run on every resolved spec, when one field's value changes
  /// another's meaning (chain's error feedback switches its children's off): the stored
  /// configuration then says what runs.
  template <class Impl, class Options>
  void add(const std::string& name, const std::string& description, bool internal = false) {
    static_assert(std::same_as<decltype(Options::fields()), OptionFields<Options>>,
                  "an options struct declares its fields as static OptionFields<Options> fields()");
    const auto table = std::make_shared<const OptionFields<Options>>(Options::fields());
    Entry entry;
    entry.info = ComponentInfo{kind_, name, description, table->specs(), internal};
    entry.validate = [table](const ComponentSpec& spec) { (void)table->read(spec); };
    entry.traits = [table](const ComponentSpec& spec) -> Traits {
      if constexpr (requires(const Options& o) {
                      { Options::traits(o) } -> std::convertible_to<Traits>;
                    })
        return Options::traits(table->read(spec));
      else
        return Traits{};
    };
    if constexpr (requires(ComponentSpec & spec) { Options::normalize(spec); })
      entry.normalize = [](ComponentSpec& spec) { Options::normalize(spec); };
    if constexpr (requires(const ComponentSpec& spec) {
                    { Options::why_not_update_exchange(spec) } -> std::convertible_to<std::string>;
                  })
      entry.why_not_update = [](const ComponentSpec& spec) { return Options::why_not_update_exchange(spec); };
    entry.make = [table](const ComponentSpec& spec) -> std::unique_ptr<T> {
      return std::make_unique<Impl>(table->read(spec));
    };
    add_entry(std::move(entry));
  }

  /// Adds fields that every entry accepts (a compressor's `scope`), after their own, to the
  /// entries there and to those added later; the entries' options structs ignore them and the
  /// caller of create() interprets them.
  void add_common_fields(const std::vector<FieldSpec>& fields) {
    for (auto& entry : entries_) entry.info.fields.insert(entry.info.fields.end(), fields.begin(), fields.end());
    common_fields_.insert(common_fields_.end(), fields.begin(), fields.end());
  }

  /// Resolves the nested components of `other`'s kind (an optimizer inside a schedule) with
  /// `other`, a copy kept here. The catalog, which holds every registry, wires them; a registry
  /// without one for a kind checks only that kind's name (ComponentInfo::resolve).
  template <class U>
  void resolve_nested_with(const Registry<U>& other) {
    foreign_[other.kind()] = [other](const ComponentSpec& spec) { return other.resolve(spec); };
  }

  /// Checks names, types and ranges; fills defaults, nested components' included (a nested
  /// component is of this registry's kind unless its field names another:
  /// FieldSpec::component_kind). Errors in a nested one name its field ("in chain.first").
  ComponentSpec resolve(const ComponentSpec& spec) const {
    const Entry& entry = find(spec.name);
    ComponentSpec resolved = entry.info.resolve(spec);
    for (const FieldSpec& field : entry.info.fields) {
      if (field.type != FieldType::Component) continue;
      try {
        resolved.fields[field.name] = nested(resolve_nested(field, resolved.component(field.name)));
      } catch (Error& e) {
        e.add_context(str_cat("in ", spec.name, ".", field.name));
        throw;
      }
    }
    if (entry.normalize) entry.normalize(resolved);
    entry.validate(resolved);
    return resolved;
  }

  /// Builds an instance from a (possibly unresolved) spec.
  std::unique_ptr<T> create(const ComponentSpec& spec) const {
    ComponentSpec resolved = resolve(spec);
    try {
      return find(spec.name).make(resolved);
    } catch (Error& e) {
      e.add_context(str_cat("while building ", kind_, " '", spec.name, "'"));
      throw;
    }
  }

  /// Why a component of this spec cannot run with exchange = "update" (each worker applies its
  /// optimizer and exchanges the update; docs/compressors.md), asked of its options struct's
  /// `static std::string why_not_update_exchange(const ComponentSpec&)` and of its nested
  /// components' without building anything; "" when it can (an entry that does not say can).
  std::string why_not_update_exchange(const ComponentSpec& spec) const {
    const ComponentSpec resolved = resolve(spec);
    const Entry& entry = find(spec.name);
    if (entry.why_not_update)
      if (std::string why = entry.why_not_update(resolved); !why.empty()) return why;
    for (const FieldSpec& field : entry.info.fields)
      if (field.type == FieldType::Component && !is_foreign(field))
        if (std::string why = why_not_update_exchange(resolved.component(field.name)); !why.empty()) return why;
    return "";
  }

  /// What the spec's component is, asked of its options struct's `static Traits traits(const
  /// Options&)` without building it (Traits{} for an entry that says nothing). The component's
  /// class passes the same to its interface's constructor, so the instance says the same
  /// (tests check it over every entry).
  Traits traits(const ComponentSpec& spec) const {
    const ComponentSpec resolved = resolve(spec);
    return find(spec.name).traits(resolved);
  }

  const std::string& kind() const { return kind_; }

  /// Entries sorted by name.
  std::vector<ComponentInfo> infos() const {
    std::vector<ComponentInfo> out;
    for (const auto& e : entries_) out.push_back(e.info);
    return out;
  }

  bool contains(const std::string& name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.info.name == name; });
  }

 private:
  struct Entry {
    ComponentInfo info;
    std::function<void(const ComponentSpec&)> validate;
    std::function<Traits(const ComponentSpec&)> traits;
    std::function<void(ComponentSpec&)> normalize;                    // optional
    std::function<std::string(const ComponentSpec&)> why_not_update;  // optional: "" = can
    std::function<std::unique_ptr<T>(const ComponentSpec&)> make;
  };

  bool is_foreign(const FieldSpec& field) const {
    return !field.component_kind.empty() && field.component_kind != kind_;
  }

  ComponentSpec resolve_nested(const FieldSpec& field, const ComponentSpec& inner) const {
    if (!is_foreign(field)) return resolve(inner);
    const auto resolver = foreign_.find(field.component_kind);
    return resolver == foreign_.end() ? inner : resolver->second(inner);
  }

  void add_entry(Entry entry) {
    entry.info.fields.insert(entry.info.fields.end(), common_fields_.begin(), common_fields_.end());
    if (contains(entry.info.name)) throw InvariantError(str_cat(kind_, " '", entry.info.name, "' is registered twice"));
    auto pos = std::lower_bound(entries_.begin(), entries_.end(), entry.info.name,
                                [](const Entry& e, const std::string& name) { return e.info.name < name; });
    entries_.insert(pos, std::move(entry));
  }

  const Entry& find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.info.name == name) return e;
    std::string known;
    for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.info.name;
    throw ConfigError(str_cat("unknown ", kind_, " '", name, "'; known: ", known));
  }

  std::string kind_;
  std::vector<Entry> entries_;
  std::vector<FieldSpec> common_fields_;
  std::map<std::string, std::function<ComponentSpec(const ComponentSpec&)>> foreign_;  // by kind
};

}  // namespace laconic
