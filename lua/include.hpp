#pragma once
// `include "path.lua"`: runs another Lua file in the same sandbox and returns what it returns,
// so experiments can share definitions (a base table, helper functions). Paths are relative to
// the directory of the experiment file; included files count in the experiment's hash.
#include "lua/context.hpp"
#include "lua/state.hpp"

namespace laconic::lua {

/// Defines the globals `include` (files relative to the experiment file's directory) and
/// `override(base, changes)` (a copy of a table with some entries replaced: deriving an
/// experiment from a base).
void install_include(SandboxedState& state, LoadContext& context);

}  // namespace laconic::lua
