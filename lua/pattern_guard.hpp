#pragma once
// Lua's pattern matcher backtracks in C, where the instruction hook never fires: a pattern such
// as ("a*"):rep(40) .. "b" against 40 characters runs for hours, and no budget or signal stops it.
// string.find, match, gmatch and gsub are wrapped so that a call whose backtracking could exceed
// kMaxPatternSteps is refused with a message instead (plain finds are not patterns).
#include <cstddef>
#include <string_view>

struct lua_State;

namespace laconic::lua {

/// log10 of the steps a match of `pattern` may take over `subject` characters at worst: each
/// repetition (`*`, `+`, `-` after a single-character class) may try every position, a `?` two
/// choices, and the match is tried at every start.
double pattern_steps_log10(std::string_view pattern, std::size_t subject);

/// 10^9 steps of the matcher: a few seconds.
inline constexpr double kMaxPatternStepsLog10 = 9;

/// Replaces string.find, match, gmatch and gsub of the state (the string table on the stack's
/// globals) by guarded ones. Called from a protected Lua call.
void guard_string_patterns(lua_State* L);

}  // namespace laconic::lua
