#pragma once
// Reading Lua values into C++ without raising Lua errors, and the guard that keeps C++
// exceptions from crossing Lua frames (Debian's Lua is C and unwinds with longjmp).
#include <cstddef>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <lua.hpp>

#include "engine/core/error.hpp"
#include "engine/core/value.hpp"

namespace laconic::lua {

/// Registry names of the private metatables of component and sweep userdata.
inline constexpr const char* kComponentMeta = "laconic.component";
inline constexpr const char* kSweepMeta = "laconic.sweep";
inline constexpr const char* kDistributionMeta = "laconic.distribution";
/// Registry table of the functions given to per-step fields, by StepFunction id.
inline constexpr const char* kStepFunctions = "laconic.step_functions";

/// A component value: index into LoadContext::components.
struct ComponentRef {
  std::size_t index;
};
/// A sweep value: index into LoadContext::sweeps.
struct SweepRef {
  std::size_t index;
};
/// A distribution value: index into LoadContext::distributions.
struct DistributionRef {
  std::size_t index;
};
/// Anything else (a table, a function, nil): only its Lua type name is kept.
struct Unsupported {
  std::string type_name;
  /// When the value is one of laconic's constructors, uncalled (`compressor = fp16`): its name.
  std::string constructor = "";
};

/// A ConfigError about a given line of the file that is running (a field of a table whose call
/// spans several lines): call_guarded() puts that line in the message instead of the call's.
class LineConfigError : public ConfigError {
 public:
  LineConfigError(const std::string& message, int line) : ConfigError(message), line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

/// "a table"; "the constructor fp16 itself (did you mean fp16()?)" for an uncalled constructor.
std::string describe_unsupported(const Unsupported& item);

/// One Lua value as the DSL sees it.
using LuaItem = std::variant<Value, ComponentRef, SweepRef, Unsupported, DistributionRef>;

/// Converts the value at `index`: integers stay int64, other numbers become double.
LuaItem read_item(lua_State* L, int index);

/// The string-keyed entries of the table at `index`, sorted by key (Lua's order is not
/// stable across runs). A non-string key is a ConfigError naming `owner`.
std::vector<std::pair<std::string, LuaItem>> read_fields(lua_State* L, int index, const std::string& owner);

/// The entries 1..n of the list at `index`; any other key is a ConfigError naming `owner`.
std::vector<LuaItem> read_list(lua_State* L, int index, const std::string& owner);

/// Keeps the Lua function at `index` (given to a per-step field) in the registry table
/// kStepFunctions and returns its id, "file.lua:LINE" of its definition ("#2", "#3" appended
/// when functions share a line); the same function object keeps its id, and loading the same
/// file again gives the same ids. A C function is a ConfigError.
std::string register_step_function(lua_State* L, int index);

/// Writes the userdata that stands for an entry of LoadContext (component or sweep).
void push_handle(lua_State* L, std::size_t index, const char* metatable);

/// Registers the metatable `name` of a kind of handle: `tostring` (with `upvalue`, the load's
/// context, as its upvalue) prints one, and files cannot reach the metatable itself.
void new_handle_metatable(lua_State* L, void* upvalue, const char* name, lua_CFunction tostring);

/// Runs body(L); a C++ exception becomes a Lua error "file:line: message" at the line that
/// called the running C function. body must not hold C++ objects with destructors across
/// Lua calls that can raise.
int call_guarded(lua_State* L, int (*body)(lua_State*));

}  // namespace laconic::lua
