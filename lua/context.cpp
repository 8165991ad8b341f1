#include "lua/context.hpp"

#include <lua.hpp>

namespace laconic::lua {

LoadContext& context_of(lua_State* L) { return *static_cast<LoadContext*>(lua_touserdata(L, lua_upvalueindex(1))); }

}  // namespace laconic::lua
