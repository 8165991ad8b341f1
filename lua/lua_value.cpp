#include "lua/lua_value.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "engine/core/error.hpp"
#include "lua/state.hpp"

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

std::string register_step_function(lua_State* L, int index) {
  index = lua_absindex(L, index);
  if (lua_getfield(L, LUA_REGISTRYINDEX, kStepFunctions) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kStepFunctions);
  }
  const int table = lua_gettop(L);
  // The same function object given twice keeps its id.
  lua_pushnil(L);
  while (lua_next(L, table) != 0) {
    if (lua_rawequal(L, -1, index)) {
      std::string id = lua_tostring(L, -2);
      lua_pop(L, 3);
      return id;
    }
    lua_pop(L, 1);
  }
  lua_Debug info;
  lua_pushvalue(L, index);
  lua_getinfo(L, ">S", &info);
  if (info.what == nullptr || std::strcmp(info.what, "C") == 0) {
    lua_pop(L, 1);
    throw ConfigError(
        "a per-step field takes a function written in the file "
        "(function(epoch, step) return ... end), got a built-in function");
  }
  // The file's name without its directory: the workers may reach it by another path.
  std::string source = info.short_src;
  if (const auto slash = source.find_last_of('/'); slash != std::string::npos) source = source.substr(slash + 1);
  const std::string base = str_cat(source, ":", info.linedefined);
  std::string id = base;
  for (int n = 2; lua_getfield(L, table, id.c_str()) != LUA_TNIL; ++n) {
    lua_pop(L, 1);
    id = str_cat(base, "#", n);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, index);
  lua_setfield(L, table, id.c_str());
  lua_pop(L, 1);  // the table
  return id;
}

std::string describe_unsupported(const Unsupported& item) {
  if (item.constructor.empty()) return "a " + item.type_name;
  return str_cat("the constructor ", item.constructor, " itself (did you mean ", item.constructor, "()?)");
}

namespace {

// The name of the constructor that the function at `index` is, or "" (any other function).
std::string constructor_name(lua_State* L, int index) {
  std::string found;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kConstructorNamesKey) == LUA_TTABLE) {
    const int names = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    const int globals = lua_gettop(L);
    const auto count = static_cast<lua_Integer>(lua_rawlen(L, names));
    for (lua_Integer i = 1; i <= count && found.empty(); ++i) {
      lua_rawgeti(L, names, i);
      lua_pushvalue(L, -1);
      lua_rawget(L, globals);
      if (lua_rawequal(L, -1, index)) found = lua_tostring(L, -2);
      lua_pop(L, 2);
    }
    lua_pop(L, 1);  // globals
  }
  lua_pop(L, 1);  // the names (or what stood for them)
  return found;
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
      if (void* p = luaL_testudata(L, index, kDistributionMeta)) return DistributionRef{handle_index(p)};
      break;
    default:
      break;
  }
  if (lua_type(L, index) == LUA_TFUNCTION) return Unsupported{"function", constructor_name(L, index)};
  return Unsupported{luaL_typename(L, index)};
}

std::vector<std::pair<std::string, LuaItem>> read_fields(lua_State* L, int index, const std::string& owner) {
  index = lua_absindex(L, index);
  std::vector<std::pair<std::string, LuaItem>> out;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      throw ConfigError(
          str_cat(owner, " takes named fields (", owner, " { field = value }), got a value at ", describe_key(L, -2)));
    std::size_t length = 0;
    const char* key = lua_tolstring(L, -2, &length);
    out.emplace_back(std::string(key, length), read_item(L, -1));
    lua_pop(L, 1);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
        throw ConfigError(str_cat(owner, " takes a list { a, b, ... }, got a field '", lua_tostring(L, -2), "'"));
      throw ConfigError(str_cat(owner, " takes a list { a, b, ... }, got a value at ", describe_key(L, -2)));
    }
    ++entries;
    lua_pop(L, 1);
  }
  if (entries != length)
    throw ConfigError(
        str_cat(owner, " takes a list without holes; it has ", entries, " values over positions 1..", length));
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
  } catch (const LineConfigError& e) {
    lua_Debug ar;
    if (lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "S", &ar) != 0)
      lua_pushfstring(L, "%s:%d: ", ar.short_src, e.line());
    else
      luaL_where(L, 1);
    lua_pushstring(L, e.what());
    lua_concat(L, 2);
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

void new_handle_metatable(lua_State* L, void* upvalue, const char* name, lua_CFunction tostring) {
  luaL_newmetatable(L, name);
  lua_pushlightuserdata(L, upvalue);
  lua_pushcclosure(L, tostring, 1);
  lua_setfield(L, -2, "__tostring");
  // Files may not reach the metatable (getmetatable returns this string instead).
  lua_pushliteral(L, "laconic values are read-only");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 1);
}

}  // namespace laconic::lua
