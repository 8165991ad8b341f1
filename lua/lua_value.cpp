#include "lua/lua_value.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "engine/core/error.hpp"

namespace laconic::lua {

namespace {

std::size_t handle_index(void* userdata) {
  std::size_t index = 0;
  std::memcpy(&index, userdata, sizeof index);
  return index;
}

std::string describe_key(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TNUMBER && lua_isinteger(L, index))
    return str_cat("position ", lua_tointeger(L, index));
  return str_cat("a key of type ", luaL_typename(L, index));
}

}  // namespace

LuaItem read_item(lua_State* L, int index) {
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      return Value{lua_toboolean(L, index) != 0};
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return Value{static_cast<std::int64_t>(lua_tointeger(L, index))};
      return Value{static_cast<double>(lua_tonumber(L, index))};
    case LUA_TSTRING: {
      // lua_tolstring does not allocate on a value that already is a string.
      std::size_t length = 0;
      const char* text = lua_tolstring(L, index, &length);
      return Value{std::string(text, length)};
    }
    case LUA_TUSERDATA:
      if (void* p = luaL_testudata(L, index, kComponentMeta)) return ComponentRef{handle_index(p)};
      if (void* p = luaL_testudata(L, index, kSweepMeta)) return SweepRef{handle_index(p)};
      break;
    default:
      break;
  }
  return Unsupported{luaL_typename(L, index)};
}

std::vector<std::pair<std::string, LuaItem>> read_fields(lua_State* L, int index,
                                                         const std::string& owner) {
  index = lua_absindex(L, index);
  std::vector<std::pair<std::string, LuaItem>> out;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      throw ConfigError(str_cat(owner, " takes named fields (", owner,
                                " { field = value }), got a value at ", describe_key(L, -2)));
    std::size_t length = 0;
    const char* key = lua_tolstring(L, -2, &length);
    out.emplace_back(std::string(key, length), read_item(L, -1));
    lua_pop(L, 1);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<LuaItem> read_list(lua_State* L, int index, const std::string& owner) {
  index = lua_absindex(L, index);
  const auto length = static_cast<lua_Integer>(lua_rawlen(L, index));
  lua_Integer entries = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > length) {
      if (lua_type(L, -2) == LUA_TSTRING)
        throw ConfigError(str_cat(owner, " takes a list { a, b, ... }, got a field '",
                                  lua_tostring(L, -2), "'"));
      throw ConfigError(str_cat(owner, " takes a list { a, b, ... }, got a value at ",
                                describe_key(L, -2)));
    }
    ++entries;
    lua_pop(L, 1);
  }
  if (entries != length)
    throw ConfigError(str_cat(owner, " takes a list without holes; it has ", entries,
                              " values over positions 1..", length));
  std::vector<LuaItem> out;
  for (lua_Integer i = 1; i <= length; ++i) {
    lua_rawgeti(L, index, i);
    out.push_back(read_item(L, -1));
    lua_pop(L, 1);
  }
  return out;
}

void push_handle(lua_State* L, std::size_t index, const char* metatable) {
  void* p = lua_newuserdatauv(L, sizeof index, 0);
  std::memcpy(p, &index, sizeof index);
  luaL_setmetatable(L, metatable);
}

int call_guarded(lua_State* L, int (*body)(lua_State*)) {
  try {
    return body(L);
  } catch (const std::exception& e) {
    // Build the Lua message while the exception is alive, raise after the handler ends so
    // that the longjmp of lua_error skips no C++ destructor. (Should a push here itself run
    // out of Lua memory, the exception object leaks; the state is about to be closed.)
    luaL_where(L, 1);
    lua_pushstring(L, e.what());
    lua_concat(L, 2);
  }
  return lua_error(L);
}

}  // namespace laconic::lua
