#pragma once
// A Lua state that runs untrusted experiment files: an allow-list of libraries, reading an
// undefined global is an error, an instruction budget and a memory cap (in the spirit of
// Redis' script sandbox). RAII: the destructor closes the state.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <lua.hpp>

namespace laconic::lua {

/// Lua registry keys under which the constructors are described for the "undefined global"
/// message: an array of constructor names, and a line listing them by kind.
inline constexpr const char* kConstructorNamesKey = "laconic.constructor_names";
inline constexpr const char* kConstructorHintKey = "laconic.constructor_hint";
/// A table whose keys are the names of every field (the experiment's and the components'): an
/// undefined global of such a name is a field written with `==` or without its table.
inline constexpr const char* kFieldNamesKey = "laconic.field_names";

/// A Lua syntax error that is a missing comma between two fields ("FILE:10: '}' expected ... near
/// 'max_steps'", found a line late) said as such: "FILE:9: missing ',' after line 9? (Lua: ...)";
/// any other message unchanged. `text` is the file's source.
std::string missing_comma_hint(const std::string& message, const std::string& file, std::string_view text);

/// A value that is a constructor not called ("FILE:3: ... got the constructor fp16 itself"),
/// reported at the line of the call it was given to: the message at the line of the first bare
/// `fp16` from there on (text: the file's text); the message as it was when none is found.
std::string bare_constructor_hint(const std::string& message, const std::string& file, std::string_view text);

class SandboxedState {
 public:
  /// A fresh sandbox; ConfigError when a limit is not positive or the state cannot be made.
  SandboxedState(std::int64_t instruction_limit, std::size_t memory_limit);
  ~SandboxedState();
  SandboxedState(const SandboxedState&) = delete;
  SandboxedState& operator=(const SandboxedState&) = delete;

  /// The raw state, for registering functions.
  lua_State* get() const { return state_; }

  /// Calls fn in protected mode with `data` as its one argument (a light userdata).
  /// A Lua error becomes an InvariantError: setup code, not the user's file, failed.
  void call_protected(lua_CFunction fn, void* data);

  /// Compiles `text` as a text chunk named after `file` (binary chunks are refused) and runs
  /// it under the budgets. Errors become ConfigError "file:line: message".
  void run_file(std::string_view text, const std::string& file);

  /// Calls the function stored in the Lua registry under `key` (after run_file) with the
  /// arguments `push` puts on the stack (it returns their count), under the same budgets (the
  /// instruction count restarts for each call), and hands its one result to `read` while it is
  /// on the stack. Errors become ConfigError "file:line: message".
  void call_registered(const char* key, const std::function<int(lua_State*)>& push,
                       const std::function<void(lua_State*)>& read);
  /// The same for the function stored at `field` of the registry's table `table`.
  void call_registered(const char* table, const std::string& field, const std::function<int(lua_State*)>& push,
                       const std::function<void(lua_State*)>& read);

  /// Evaluates the Lua expression `expression` (as `return expression`, a chunk named `name`)
  /// under the same budgets and hands its one value to `read` while it is on the stack. Errors
  /// become ConfigError "name: message".
  void evaluate(const std::string& expression, const std::string& name, const std::function<void(lua_State*)>& read);

 private:
  /// Calls the function on top of the stack (above the message handler) as call_registered().
  void call_pushed(const std::function<int(lua_State*)>& push, const std::function<void(lua_State*)>& read);

  /// Shared with the allocator and the hook (both reach it through the allocator's ud).
  struct Budget {
    std::size_t memory_limit = 0;  ///< bytes
    std::size_t memory_used = 0;   ///< bytes currently allocated by the state
    bool memory_exceeded = false;  ///< an allocation was refused
    std::int64_t instruction_limit = 0;
    std::int64_t instructions = 0;  ///< counted in steps of hook_step
    int hook_step = 1;
    bool instructions_exceeded = false;
    lua_State* running = nullptr;           ///< set while the file runs: where refusals are located
    char refused_at[LUA_IDSIZE + 32] = "";  ///< "file:line: " of the last refused allocation
    std::string memory_message;             ///< "experiment file exceeded its memory limit of ..."
    std::string instruction_message;        ///< "experiment file exceeded its instruction budget ..."
  };

  static void* allocate(void* ud, void* ptr, std::size_t old_size, std::size_t new_size);
  static void count_hook(lua_State* L, lua_Debug* ar);
  static void locate_refusal(Budget& budget);
  static int message_handler(lua_State* L);
  static int open_sandbox(lua_State* L);
  std::string describe_error(int status, const std::string& file, const std::string& shown);

  Budget budget_;
  lua_State* state_ = nullptr;
  std::string file_, shown_;  // the file run_file ran, and how Lua names it in messages
};

}  // namespace laconic::lua
