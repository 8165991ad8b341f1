#include "lua/include.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"
#include "lua/lua_value.hpp"

namespace laconic::lua {

namespace {

constexpr int kMaxDepth = 8;

/// Reads the file and loads it as a function on the stack. Arguments: the path, and the
/// "file:line: " of the include call, which prefixes every error.
int load_body(lua_State* L) {
  LoadContext& context = context_of(L);
  const std::string where = lua_tostring(L, 2) ? lua_tostring(L, 2) : "";
  try {
    if (lua_type(L, 1) != LUA_TSTRING)
      throw ConfigError(
          "include takes the path of a Lua file, relative to the experiment "
          "file: include \"base.lua\"");
    const std::string relative = lua_tostring(L, 1);
    if (relative.empty() || relative.front() == '/')
      throw ConfigError(str_cat("include needs a path relative to the experiment file, got \"", relative, "\""));
    if (context.include_depth >= kMaxDepth)
      throw ConfigError(
          str_cat("include \"", relative, "\" nests deeper than ", kMaxDepth, " files (an include cycle?)"));
    const std::string path = context.directory + relative;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(str_cat("cannot include '", path, "': ", std::strerror(errno)));
    std::stringstream text;
    text << in.rdbuf();
    const std::string bytes = text.str();
    context.included += str_cat("\n--include ", relative, "\n", bytes);
    const std::string chunkname = "@" + path;
    if (luaL_loadbufferx(L, bytes.data(), bytes.size(), chunkname.c_str(), "t") != LUA_OK)
      throw ConfigError(lua_tostring(L, -1));
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
  return 1;
}

int load_included(lua_State* L) { return call_guarded(L, load_body); }

/// include(path): load (guarded), then call in place so errors keep the included file's lines.
int include(lua_State* L) {
  LoadContext& context = context_of(L);
  lua_settop(L, 1);
  luaL_where(L, 1);  // the include call's "file:line: "
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, load_included, 1);
  lua_insert(L, 1);
  lua_call(L, 2, 1);  // the loaded chunk
  ++context.include_depth;
  lua_call(L, 0, LUA_MULTRET);
  --context.include_depth;
  return lua_gettop(L);
}

/// override(base, changes): a shallow copy of `base` with the entries of `changes` replacing
/// or adding to its own; `base` is left as it was.
int override(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_newtable(L);
  for (int source : {1, 2}) {
    if (lua_isnoneornil(L, source)) continue;
    lua_pushnil(L);
    while (lua_next(L, source) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
  }
  return 1;
}

int register_include(lua_State* L) {
  lua_pushvalue(L, 1);  // the context, as a light userdata upvalue
  lua_pushcclosure(L, include, 1);
  lua_setglobal(L, "include");
  lua_pushcfunction(L, override);
  lua_setglobal(L, "override");
  return 0;
}

}  // namespace

void install_include(SandboxedState& state, LoadContext& context) { state.call_protected(register_include, &context); }

}  // namespace laconic::lua
