#pragma once
// The global functions that build values of the DSL: one constructor per catalog entry
// (`topk { ratio = 0.01 }`, `lenet5()`) and `sweep { a, b, ... }`.
#include "lua/context.hpp"
#include "lua/lua_value.hpp"
#include "lua/state.hpp"

namespace laconic::lua {

/// Defines one global constructor per entry of context.catalog, `sweep`, and the private
/// metatables of their values. Two kinds defining one name, or a name that hides a sandbox
/// global, is an InvariantError (a registry bug, not the user's).
void install_constructors(SandboxedState& state, LoadContext& context);

/// Builds one constructor call from its fields (values, component references), resolving it
/// with the catalog. Errors name the constructor, the field and the value.
Component build_component(const LoadContext& context, const ComponentInfo& info,
                          const std::vector<std::pair<std::string, LuaItem>>& fields);

/// The written fields' names in the catalog's order (then any it does not list): what names a run.
std::vector<std::string> written_order_of(const ComponentInfo& info, const ComponentSpec& written);

}  // namespace laconic::lua
