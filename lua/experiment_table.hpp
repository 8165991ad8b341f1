#pragma once
// The global `experiment { ... }`: checks each field of the table as soon as it is called, so
// errors point at the call, and records the result for sweep expansion.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lua/context.hpp"
#include "lua/fields.hpp"
#include "lua/lua_value.hpp"
#include "lua/state.hpp"

namespace laconic::lua {

/// Defines the global `experiment`; its call fills context.draft (a second call is an error).
void install_experiment(SandboxedState& state, LoadContext& context);

/// Checks one value of an experiment field (a scalar or a component) and returns it as the field
/// holds it (an int from an integral float); `where` goes after the field's name in the message
/// (" (sweep alternative 2)", " (--set)"). ConfigError without location.
Choice check_choice(const LoadContext& context, const ExperimentField& field, const Choice& choice,
                    const std::string& where);

/// Checks the fields of the experiment table (sorted by name, as read_fields gives them) and
/// the items of its `seeds` list when it is a list. ConfigError without location.
ExperimentDraft parse_experiment(const LoadContext& context, const std::vector<std::pair<std::string, LuaItem>>& fields,
                                 const std::optional<std::vector<LuaItem>>& seeds);

/// Sets one field of `draft` from a Lua value as the experiment table would (`--set
/// compressor=sweep{...}`): a component, a sweep, a scalar. Not name or seeds. ConfigError
/// without location.
void set_experiment_field(const LoadContext& context, const std::string& key, const LuaItem& item,
                          ExperimentDraft& draft);

}  // namespace laconic::lua
