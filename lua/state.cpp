#include "lua/state.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/suggest.hpp"
#include "lua/pattern_guard.hpp"

namespace laconic::lua {

namespace {

/// Extra bytes granted once the cap was hit, so the error message itself can be built.
constexpr std::size_t kMemorySlack = 256 << 10;
/// Instructions between two hook calls; small enough that budgets of a few thousand work.
constexpr std::int64_t kHookStep = 1000;

/// Globals of the base library that a sandboxed file may not keep (file access, GC control).
constexpr const char* kRemovedGlobals[] = {"dofile", "loadfile", "collectgarbage"};

std::string format_mib(std::size_t bytes) {
  constexpr std::size_t kMiB = 1 << 20;
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB);
  return str_cat(static_cast<double>(bytes) / static_cast<double>(kMiB));
}

/// `load` restricted to text chunks: whatever mode the caller asks for becomes "t".
int load_text_only(lua_State* L) {
  // Keep "no env given" distinct from "env = nil": the original load checks lua_isnone(4).
  if (lua_gettop(L) > 4) lua_settop(L, 4);
  if (lua_gettop(L) < 3) lua_settop(L, 3);
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/// The "did you mean" and the list of constructors, from what set_constructor_hint stored.
std::string undefined_global_detail(lua_State* L, const std::string& name) {
  // `batch_size == 64` in a table reads the global batch_size: a field, so the '=' is what is wrong.
  bool field = false;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kFieldNamesKey) == LUA_TTABLE) {
    field = lua_getfield(L, -1, name.c_str()) == LUA_TBOOLEAN;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (field)
    return str_cat(": '", name, "' is a field, set inside its table with one '=' (", name,
                   " = ...); did you mean '=' where '==' stands, or is the field outside its table?");
  std::string detail;
  lua_getfield(L, LUA_REGISTRYINDEX, kConstructorNamesKey);
  if (lua_istable(L, -1)) {
    std::vector<std::string> candidates;
    const lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, -1, i);
      candidates.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    const std::string best = closest_name(name, candidates);
    if (!best.empty()) detail += "; did you mean '" + best + "'?";
  }
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kConstructorHintKey);
  if (lua_isstring(L, -1)) detail += std::string(" (constructors: ") + lua_tostring(L, -1) + ")";
  lua_pop(L, 1);
  return detail;
}

/// __index of the global table: reading a global nobody defined is a typo, not a nil. The
/// message suggests the nearest constructor and lists them by kind.
int undefined_global(lua_State* L) {
  if (lua_type(L, 2) != LUA_TSTRING) return luaL_error(L, "undefined global (a key of type %s)", luaL_typename(L, 2));
  luaL_where(L, 1);
  {
    // C++ objects must be gone before lua_error unwinds with longjmp.
    const std::string name = lua_tostring(L, 2);
    const std::string message = "undefined global '" + name + "'" + undefined_global_detail(L, name);
    lua_pushlstring(L, message.data(), message.size());
  }
  lua_concat(L, 2);
  return lua_error(L);
}

}  // namespace

SandboxedState::SandboxedState(std::int64_t instruction_limit, std::size_t memory_limit) {
  if (instruction_limit < 1) throw ConfigError(str_cat("instruction limit must be >= 1, got ", instruction_limit));
  if (memory_limit < (1u << 20))
    throw ConfigError(str_cat("memory limit must be >= 1 MiB, got ", memory_limit, " bytes"));
  budget_.memory_limit = memory_limit;
  budget_.instruction_limit = instruction_limit;
  budget_.hook_step = static_cast<int>(std::min(kHookStep, instruction_limit));
  budget_.memory_message = str_cat("experiment file exceeded its memory limit of ", format_mib(memory_limit), " MiB");
  budget_.instruction_message = str_cat("experiment file exceeded its instruction budget of ", instruction_limit,
                                        " instructions (infinite loop?)");
  state_ = lua_newstate(&SandboxedState::allocate, &budget_);
  if (state_ == nullptr) throw ConfigError(str_cat("cannot create a Lua state within ", budget_.memory_message));
  lua_atpanic(state_, [](lua_State* L) -> int {
    // Only reachable through an unprotected call, which this file never makes.
    std::fprintf(stderr, "laconic: unprotected Lua error: %s\n", lua_tostring(L, -1));
    std::abort();
  });
  call_protected(&SandboxedState::open_sandbox, nullptr);
}

SandboxedState::~SandboxedState() {
  if (state_ != nullptr) lua_close(state_);
}

void* SandboxedState::allocate(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto* budget = static_cast<Budget*>(ud);
  // When ptr is null, old_size encodes the type of object being created, not a size.
  const std::size_t old_bytes = ptr != nullptr ? old_size : 0;
  if (new_size == 0) {
    std::free(ptr);
    budget->memory_used -= old_bytes;
    return nullptr;
  }
  if (new_size > old_bytes) {
    const std::size_t cap = budget->memory_limit + (budget->memory_exceeded ? kMemorySlack : 0);
    const std::size_t others = budget->memory_used - old_bytes;
    if (others > cap || new_size > cap - others) {
      budget->memory_exceeded = true;
      locate_refusal(*budget);
      return nullptr;
    }
  }
  void* grown = std::realloc(ptr, new_size);
  if (grown == nullptr) return nullptr;
  budget->memory_used = budget->memory_used - old_bytes + new_size;
  return grown;
}

void SandboxedState::locate_refusal(Budget& budget) {
  // Lua raises memory errors without a position and without calling the message handler, so
  // note the innermost line of Lua code now. Only the main thread runs (no coroutine library),
  // and lua_getstack / lua_getinfo("Sl") read the call chain without allocating.
  budget.refused_at[0] = '\0';
  if (budget.running == nullptr) return;
  lua_Debug ar;
  for (int level = 0; lua_getstack(budget.running, level, &ar) != 0; ++level) {
    lua_getinfo(budget.running, "Sl", &ar);
    if (ar.currentline > 0) {
      std::snprintf(budget.refused_at, sizeof budget.refused_at, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
}

void SandboxedState::count_hook(lua_State* L, lua_Debug*) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  auto* budget = static_cast<Budget*>(ud);
  budget->instructions += budget->hook_step;
  if (budget->instructions_exceeded || budget->instructions >= budget->instruction_limit) {
    budget->instructions_exceeded = true;
    // Fire at every instruction from now on, so that a pcall in the file cannot swallow it.
    lua_sethook(L, &SandboxedState::count_hook, LUA_MASKCOUNT, 1);
    // A hook runs in the frame of the interrupted function: its line is level 0, not 1.
    luaL_where(L, 0);
    lua_pushstring(L, budget->instruction_message.c_str());
    lua_concat(L, 2);
    lua_error(L);
  }
}

int SandboxedState::message_handler(lua_State* L) {
  if (lua_tostring(L, 1) == nullptr) lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

int SandboxedState::open_sandbox(lua_State* L) {
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  lua_settop(L, 0);

  for (const char* name : kRemovedGlobals) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, "load");
  lua_pushcclosure(L, load_text_only, 1);
  lua_setglobal(L, "load");
  guard_string_patterns(L);
  // string.dump only makes binary chunks, which nothing here may load.
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  // Every worker loads the same file: math.random must give every one the same numbers.
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, 0);
  lua_call(L, 1, 0);
  lua_pop(L, 1);

  lua_pushglobaltable(L);
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, undefined_global);
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "the global table's metatable is locked");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  return 0;
}

void SandboxedState::call_protected(lua_CFunction fn, void* data) {
  lua_pushcfunction(state_, fn);
  lua_pushlightuserdata(state_, data);
  if (lua_pcall(state_, 1, 0, 0) != LUA_OK) {
    std::string message = lua_tostring(state_, -1) ? lua_tostring(state_, -1) : "(no message)";
    lua_pop(state_, 1);
    if (budget_.memory_exceeded) throw ConfigError(str_cat("cannot set up the Lua sandbox: ", budget_.memory_message));
    throw InvariantError(str_cat("cannot set up the Lua sandbox: ", message));
  }
}

std::string SandboxedState::describe_error(int status, const std::string& file, const std::string& shown) {
  std::string message = "(no message)";
  if (const char* text = lua_tostring(state_, -1)) message = text;
  lua_pop(state_, 1);
  if (budget_.instructions_exceeded && message.find(budget_.instruction_message) == std::string::npos)
    message = budget_.instruction_message;
  else if (budget_.memory_exceeded && (status == LUA_ERRMEM || status == LUA_ERRERR || message == "not enough memory"))
    message = budget_.refused_at + budget_.memory_message;
  // Lua shortens long chunk names ("...t/dir/x.lua"); show the path as the user gave it.
  if (!shown.empty() && message.compare(0, shown.size() + 1, shown + ":") == 0)
    return file + message.substr(shown.size());
  return str_cat(file, ": ", message);
}

namespace {

/// Line `number` (from 1) of `text`, without its comment and surrounding blanks.
std::string code_of_line(std::string_view text, int number) {
  std::size_t begin = 0;
  for (int n = 1; n < number && begin != std::string_view::npos; ++n) {
    begin = text.find('\n', begin);
    if (begin != std::string_view::npos) ++begin;
  }
  if (begin == std::string_view::npos || begin >= text.size()) return "";
  std::string line(text.substr(begin, text.find('\n', begin) - begin));
  line = line.substr(0, line.find("--"));
  const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : line.substr(first, last - first + 1);
}

}  // namespace

std::string missing_comma_hint(const std::string& message, const std::string& file, std::string_view text) {
  // "FILE:10: '}' expected (to close '{' at line 4) near 'max_steps'": Lua noticed the missing
  // separator at the next field, a line late. Name the line that lacks it.
  const std::string prefix = file + ":";
  if (message.compare(0, prefix.size(), prefix) != 0 || message.find(" expected") == std::string::npos ||
      message.find(" near '") == std::string::npos)
    return message;
  const int line = std::atoi(message.c_str() + prefix.size());
  if (line < 2) return message;
  int previous = line - 1;
  while (previous > 0 && code_of_line(text, previous).empty()) --previous;
  const std::string code = code_of_line(text, previous), here = code_of_line(text, line);
  if (code.empty() || std::string(",;{([=").find(code.back()) != std::string::npos) return message;
  // Only when the line Lua stopped at starts a new field or value (`name =`, a constructor).
  if (here.empty() || !(std::isalpha(static_cast<unsigned char>(here.front())) || here.front() == '_')) return message;
  const std::string lua_said = message.substr(message.find(':', prefix.size()) + 2);
  return str_cat(file, ":", previous, ": missing ',' after line ", previous, "? (Lua: ", lua_said, " on line ", line,
                 ")");
}

namespace {

/// True when `code` names `name` bare at `at`: a whole word not called (no `(` or `{` after it).
bool bare_name_at(const std::string& code, std::size_t at, const std::string& name) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (at > 0 && (word(code[at - 1]) || code[at - 1] == '.')) return false;
  const std::size_t after = at + name.size();
  if (after < code.size() && word(code[after])) return false;
  const std::size_t next = code.find_first_not_of(" \t", after);
  return next == std::string::npos || (code[next] != '(' && code[next] != '{' && code[next] != '"');
}

}  // namespace

std::string bare_constructor_hint(const std::string& message, const std::string& file, std::string_view text) {
  // "FILE:3: sweep alternative 2 must be ..., got the constructor fp16 itself (did you mean
  // fp16()?)": Lua reports the line of the call the table is given to; name the line of `fp16`.
  const std::string prefix = file + ":", marker = "the constructor ";
  const auto named = message.find(marker);
  if (message.compare(0, prefix.size(), prefix) != 0 || named == std::string::npos) return message;
  const std::string name = message.substr(named + marker.size(), message.find(' ', named + marker.size()) -
                                                                     named - marker.size());
  const int line = std::atoi(message.c_str() + prefix.size());
  const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (int n = std::max(line, 1); n <= lines; ++n) {
    const std::string code = code_of_line(text, n);
    for (std::size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1))
      if (bare_name_at(code, at, name)) {
        if (n == line) return message;
        const std::string rest = message.substr(message.find(':', prefix.size()) + 1);
        return str_cat(file, ":", n, ":", rest);
      }
  }
  return message;
}

void SandboxedState::run_file(std::string_view text, const std::string& file) {
  // A "#!" first line is skipped as luaL_loadfile does; its newline stays so lines count right.
  if (!text.empty() && text.front() == '#') {
    const auto end = text.find('\n');
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
  }
  lua_State* L = state_;
  lua_settop(L, 0);
  lua_pushcfunction(L, &SandboxedState::message_handler);
  const std::string chunkname = "@" + file;
  // Ask Lua how it will show the chunk's name in messages (it shortens long paths), by
  // loading an empty chunk of the same name.
  std::string shown = file;
  if (luaL_loadbufferx(L, "", 0, chunkname.c_str(), "t") == LUA_OK) {
    lua_Debug ar;
    lua_getinfo(L, ">S", &ar);
    shown = ar.short_src;
  } else {
    lua_pop(L, 1);
  }
  int status = luaL_loadbufferx(L, text.data(), text.size(), chunkname.c_str(), "t");
  if (status != LUA_OK) throw ConfigError(missing_comma_hint(describe_error(status, file, shown), file, text));

  file_ = file;
  shown_ = shown;
  budget_.instructions = 0;
  lua_sethook(L, &SandboxedState::count_hook, LUA_MASKCOUNT, budget_.hook_step);
  budget_.running = L;
  status = lua_pcall(L, 0, 0, 1);
  budget_.running = nullptr;
  lua_sethook(L, nullptr, 0, 0);
  if (status != LUA_OK) throw ConfigError(bare_constructor_hint(describe_error(status, file, shown), shown, text));
  lua_settop(L, 0);
}

void SandboxedState::call_registered(const char* key, const std::function<int(lua_State*)>& push,
                                     const std::function<void(lua_State*)>& read) {
  lua_State* L = state_;
  lua_settop(L, 0);
  lua_pushcfunction(L, &SandboxedState::message_handler);
  lua_getfield(L, LUA_REGISTRYINDEX, key);
  LACONIC_ENFORCE(lua_isfunction(L, -1), "no Lua function registered as '", key, "'");
  call_pushed(push, read);
}

void SandboxedState::call_registered(const char* table, const std::string& field,
                                     const std::function<int(lua_State*)>& push,
                                     const std::function<void(lua_State*)>& read) {
  lua_State* L = state_;
  lua_settop(L, 0);
  lua_pushcfunction(L, &SandboxedState::message_handler);
  const bool found =
      lua_getfield(L, LUA_REGISTRYINDEX, table) == LUA_TTABLE && lua_getfield(L, -1, field.c_str()) == LUA_TFUNCTION;
  LACONIC_ENFORCE(found, "no Lua function registered as '", table, "'['", field, "']");
  lua_remove(L, -2);  // the table
  call_pushed(push, read);
}

void SandboxedState::evaluate(const std::string& expression, const std::string& name,
                              const std::function<void(lua_State*)>& read) {
  lua_State* L = state_;
  lua_settop(L, 0);
  lua_pushcfunction(L, &SandboxedState::message_handler);
  const std::string chunk = "return " + expression;
  const std::string chunkname = "=" + name;
  if (luaL_loadbufferx(L, chunk.data(), chunk.size(), chunkname.c_str(), "t") != LUA_OK) {
    std::string message = lua_tostring(L, -1);
    lua_settop(L, 0);
    throw ConfigError(message);
  }
  const std::string file = file_, shown = shown_;
  file_ = shown_ = name;
  try {
    call_pushed([](lua_State*) { return 0; }, read);
  } catch (...) {
    file_ = file, shown_ = shown;
    throw;
  }
  file_ = file, shown_ = shown;
}

void SandboxedState::call_pushed(const std::function<int(lua_State*)>& push,
                                 const std::function<void(lua_State*)>& read) {
  lua_State* L = state_;
  const int arguments = push(L);
  budget_.instructions = 0;
  lua_sethook(L, &SandboxedState::count_hook, LUA_MASKCOUNT, budget_.hook_step);
  budget_.running = L;
  const int status = lua_pcall(L, arguments, 1, 1);
  budget_.running = nullptr;
  lua_sethook(L, nullptr, 0, 0);
  if (status != LUA_OK) throw ConfigError(describe_error(status, file_, shown_));
  read(L);
  lua_settop(L, 0);
}

}  // namespace laconic::lua
