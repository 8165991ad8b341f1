#include "lua/pattern_guard.hpp"

#include <cmath>
#include <string>

#include <lua.hpp>

#include "engine/core/error.hpp"

namespace laconic::lua {

namespace {

// The index just past the set `[...]` that opens at `i` (a leading ^ and a first ] are its own).
std::size_t past_set(std::string_view p, std::size_t i) {
  ++i;
  if (i < p.size() && p[i] == '^') ++i;
  if (i < p.size() && p[i] == ']') ++i;
  while (i < p.size() && p[i] != ']') i += p[i] == '%' ? 2 : 1;
  return i + 1;
}

}  // namespace

double pattern_steps_log10(std::string_view p, std::size_t subject) {
  std::size_t repeats = 0, optionals = 0;
  std::size_t i = p.size() > 0 && p[0] == '^' ? 1 : 0;
  while (i < p.size()) {
    const char c = p[i];
    bool single = true;  // a single-character class, which a quantifier may follow
    if (c == '(' || c == ')') {
      single = false;
      ++i;
    } else if (c == '%' && i + 1 < p.size() && (p[i + 1] == 'b')) {
      single = false;
      i += 4;
    } else if (c == '%' && i + 1 < p.size() && p[i + 1] == 'f') {
      single = false;
      i = i + 2 < p.size() && p[i + 2] == '[' ? past_set(p, i + 2) : i + 2;
    } else if (c == '%') {
      i += 2;
    } else if (c == '[') {
      i = past_set(p, i);
    } else {
      ++i;
    }
    if (!single || i >= p.size()) continue;
    if (p[i] == '*' || p[i] == '+' || p[i] == '-') {
      ++repeats;
      ++i;
    } else if (p[i] == '?') {
      ++optionals;
      ++i;
    }
  }
  const double n = std::log10(static_cast<double>(subject) + 1);
  return n * static_cast<double>(repeats + 1) + std::log10(2.0) * static_cast<double>(optionals);
}

namespace {

// upvalue 1: the library's function; 2: its name. find with `plain` searches no pattern.
int guarded(lua_State* L) {
  const char* name = lua_tostring(L, lua_upvalueindex(2));
  std::size_t subject = 0, pattern = 0;
  const char* s = luaL_checklstring(L, 1, &subject);
  const char* p = luaL_checklstring(L, 2, &pattern);
  (void)s;
  const bool plain = std::string_view(name) == "find" && lua_toboolean(L, 4);
  if (!plain) {
    const double steps = pattern_steps_log10({p, pattern}, subject);
    if (steps > kMaxPatternStepsLog10)
      return luaL_error(L,
                        "string.%s: the pattern '%s' on %d characters could backtrack about 10^%d times, past the "
                        "10^%d an experiment file may spend (the matcher runs where the instruction budget cannot "
                        "stop it); use fewer repetitions (*, +, -) or a shorter string",
                        name, p, static_cast<int>(subject), static_cast<int>(std::lround(steps)),
                        static_cast<int>(kMaxPatternStepsLog10));
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

}  // namespace

void guard_string_patterns(lua_State* L) {
  lua_getglobal(L, LUA_STRLIBNAME);
  for (const char* name : {"find", "match", "gmatch", "gsub"}) {
    lua_getfield(L, -1, name);
    lua_pushstring(L, name);
    lua_pushcclosure(L, guarded, 2);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

}  // namespace laconic::lua
