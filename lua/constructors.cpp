#include "lua/constructors.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/hash.hpp"
#include "lua/fields.hpp"
#include "lua/lua_value.hpp"

namespace laconic::lua {

namespace {

/// Names a constructor may not take: the DSL's own functions and the sandbox's globals.
const std::set<std::string, std::less<>> kReservedNames = {
    "_G",       "_VERSION", "assert",   "error",  "experiment",   "getmetatable", "include", "ipairs",
    "load",     "math",     "override", "next",   "pairs",        "pcall",        "print",   "rawequal",
    "rawget",   "rawlen",   "rawset",   "select", "setmetatable", "string",       "sweep",   "table",
    "tonumber", "tostring", "type",     "warn",   "xpcall",       "log_uniform",  "int",     "choice"};

std::string describe_item(const LoadContext& context, const LuaItem& item) {
  if (const auto* value = std::get_if<Value>(&item)) return str_cat(value_type_name(*value), " ", format_value(*value));
  if (const auto* ref = std::get_if<ComponentRef>(&item))
    return str_cat(context.components[ref->index].written.kind, " ", context.components[ref->index].written.name, "()");
  if (std::holds_alternative<SweepRef>(item)) return "a sweep";
  if (std::holds_alternative<DistributionRef>(item)) return "a distribution";
  return describe_unsupported(std::get<Unsupported>(item));
}

/// `sizes = {784, 392, 50, 10}`: the table of an IntList field, read from the constructor's
/// argument (read_fields keeps tables only as their type name). Each entry must be an integer.
Value read_int_list(lua_State* L, const LoadContext& context, const ComponentInfo& info, const std::string& field) {
  const std::string owner = str_cat(info.name, ".", field);
  lua_getfield(L, 1, field.c_str());
  const std::vector<LuaItem> items = read_list(L, -1, owner);
  lua_pop(L, 1);
  std::vector<std::int64_t> list;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto* value = std::get_if<Value>(&items[i]);
    const auto* integer = value ? std::get_if<std::int64_t>(value) : nullptr;
    if (integer == nullptr)
      throw ConfigError(
          str_cat(owner, " must be a list of ints, got ", describe_item(context, items[i]), " at position ", i + 1));
    list.push_back(*integer);
  }
  return list;
}

/// Fields naming a file relative to the experiment file (FieldSpec::relative_to_file, e.g.
/// torchscript's `file`): resolved against the experiment file's directory, and (when hashed)
/// the file's bytes made part of the experiment's hash, as for an included file. A file that is
/// not there is left to the component, whose error names the constructor's line when the runs
/// are checked.
void resolve_files(LoadContext& context, const ComponentInfo& info,
                   std::vector<std::pair<std::string, LuaItem>>& fields) {
  auto resolve = [&](Value& value, bool hashed) {
    auto* text = std::get_if<std::string>(&value);
    if (text == nullptr || text->empty()) return;
    const std::string written = *text;
    if (written.front() != '/') *text = context.directory + written;
    if (!hashed) return;
    std::ifstream in(*text, std::ios::binary);
    if (!in) return;
    std::stringstream bytes;
    bytes << in.rdbuf();
    context.included += str_cat("\n--file ", written, "\n", fnv1a_hex(bytes.str()));
  };
  for (auto& [field, item] : fields) {
    const auto spec =
        std::find_if(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == field; });
    if (spec == info.fields.end() || !spec->relative_to_file) continue;
    if (auto* value = std::get_if<Value>(&item)) resolve(*value, spec->hashed);
    if (const auto* sweep = std::get_if<SweepRef>(&item))
      for (Choice& choice : context.sweeps[sweep->index].alternatives)
        if (auto* value = std::get_if<Value>(&choice)) resolve(*value, spec->hashed);
  }
}

/// `betas = {0.9, 0.999}`: the table of a NumberList field, read like an IntList's.
Value read_number_list(lua_State* L, const LoadContext& context, const ComponentInfo& info, const std::string& field) {
  const std::string owner = str_cat(info.name, ".", field);
  lua_getfield(L, 1, field.c_str());
  const std::vector<LuaItem> items = read_list(L, -1, owner);
  lua_pop(L, 1);
  std::vector<double> list;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto* value = std::get_if<Value>(&items[i]);
    const auto* number = value ? std::get_if<double>(value) : nullptr;
    const auto* integer = value ? std::get_if<std::int64_t>(value) : nullptr;
    if (number == nullptr && integer == nullptr)
      throw ConfigError(
          str_cat(owner, " must be a list of numbers, got ", describe_item(context, items[i]), " at position ", i + 1));
    list.push_back(number ? *number : static_cast<double>(*integer));
  }
  return list;
}

/// `sgd { lr = sweep { 0.1, 0.01 }, momentum = 0.9 }`: the constructor becomes a sweep of
/// components, one per combination of its inner sweeps (crossed; paired when they share a
/// group, which the resulting sweep keeps so that it pairs with the experiment's sweeps of
/// that group). Returns the index of the new SweepDef, or nothing when no field is swept.
std::optional<std::size_t> sweep_inside(LoadContext& context, const ComponentInfo& info,
                                        const std::vector<std::pair<std::string, LuaItem>>& fields) {
  std::vector<std::size_t> swept;
  for (std::size_t f = 0; f < fields.size(); ++f)
    if (std::holds_alternative<SweepRef>(fields[f].second)) swept.push_back(f);
  if (swept.empty()) return std::nullopt;
  const auto sweep_of = [&](std::size_t f) -> const SweepDef& {
    return context.sweeps[std::get<SweepRef>(fields[f].second).index];
  };
  const std::string group = sweep_of(swept.front()).group;
  for (std::size_t f : swept) {
    if (sweep_of(f).random)
      throw ConfigError(str_cat(info.name, ".", fields[f].first, " holds a component with ",
                                "distributions; draw values in the outer component or the "
                                "experiment instead"));
    if (sweep_of(f).group != group)
      throw ConfigError(str_cat("the sweeps inside one ", info.name,
                                " { ... } must all be paired "
                                "in one group or all ungrouped; '",
                                fields[swept.front()].first, "' has group '", group, "', '", fields[f].first, "' has '",
                                sweep_of(f).group, "'"));
    if (!group.empty() && sweep_of(f).alternatives.size() != sweep_of(swept.front()).alternatives.size())
      throw ConfigError(str_cat("sweeps of group '", group, "' are paired and need the same ",
                                "number of alternatives: ", info.name, ".", fields[swept.front()].first, " has ",
                                sweep_of(swept.front()).alternatives.size(), ", ", info.name, ".", fields[f].first,
                                " has ", sweep_of(f).alternatives.size()));
  }
  std::vector<std::string> names;
  for (std::size_t f : swept) names.push_back(fields[f].first);
  // An odometer over the swept fields (one wheel when paired), the last turning fastest.
  std::vector<std::size_t> position(group.empty() ? swept.size() : 1, 0);
  SweepDef out{{}, group, std::nullopt};
  while (true) {
    std::vector<std::pair<std::string, LuaItem>> combination = fields;
    for (std::size_t s = 0; s < swept.size(); ++s) {
      const Choice& choice = sweep_of(swept[s]).alternatives[position[group.empty() ? s : 0]];
      LuaItem& item = combination[swept[s]].second;
      if (const auto* value = std::get_if<Value>(&choice)) {
        item = *value;
      } else {
        context.components.push_back(std::get<Component>(choice));
        item = ComponentRef{context.components.size() - 1};
      }
    }
    Component component = build_component(context, info, combination);
    component.swept_fields = names;
    out.alternatives.emplace_back(std::move(component));
    std::size_t w = position.size();
    const auto length = [&](std::size_t wheel) { return sweep_of(swept[wheel]).alternatives.size(); };
    while (w > 0 && ++position[w - 1] == length(w - 1)) position[--w] = 0;
    if (w == 0) break;
  }
  context.sweeps.push_back(std::move(out));
  return context.sweeps.size() - 1;
}

/// `sgd { lr = log_uniform(1e-3, 1e-1) }`: the constructor becomes a random template, built
/// once per sample when the experiment draws them (random_search.hpp). The call is checked
/// now with each distribution's lower bound (or first choice), so that mistakes point here.
std::optional<std::size_t> random_inside(LoadContext& context, const ComponentInfo& info,
                                         const std::vector<std::pair<std::string, LuaItem>>& fields) {
  RandomTemplate t;
  std::vector<std::pair<std::string, LuaItem>> probe;
  std::string swept;
  for (const auto& [field, item] : fields) {
    if (const auto* d = std::get_if<DistributionRef>(&item)) {
      t.drawn.emplace_back(field, d->index);
      probe.emplace_back(field, context.distributions[d->index].probe_values().front());
      continue;
    }
    if (std::holds_alternative<SweepRef>(item)) swept = field;
    if (const auto* ref = std::get_if<ComponentRef>(&item)) t.fixed_components.emplace_back(field, ref->index);
    if (const auto* value = std::get_if<Value>(&item)) t.fixed.emplace_back(field, *value);
    probe.emplace_back(field, item);
  }
  if (t.drawn.empty()) return std::nullopt;
  if (!swept.empty())
    throw ConfigError(str_cat(info.name,
                              " { ... } takes either sweeps or distributions, not "
                              "both ('",
                              swept, "' is a sweep)"));
  (void)build_component(context, info, probe);
  for (std::size_t c = 0; c < context.constructors.size(); ++c)
    if (context.constructors[c].name == info.name && context.constructors[c].kind == info.kind) t.constructor = c;
  context.sweeps.push_back({{}, "", std::move(t)});
  return context.sweeps.size() - 1;
}

int construct_body(lua_State* L) {
  LoadContext& context = context_of(L);
  std::size_t index = 0;
  bool is_sweep = false;
  {
    luaL_where(L, 1);  // "file:line: " of this call, for errors found once the runs are planned
    const std::string location = lua_tostring(L, -1);
    lua_pop(L, 1);
    const ComponentInfo& info = context.constructors[static_cast<std::size_t>(lua_tointeger(L, lua_upvalueindex(2)))];
    std::vector<std::pair<std::string, LuaItem>> fields;
    const int arguments = lua_gettop(L);
    if (arguments > 1)
      throw ConfigError(str_cat(info.name, " takes one table of fields (", info.name, " { field = value }), got ",
                                arguments, " arguments"));
    if (arguments == 1 && !lua_isnil(L, 1)) {
      if (!lua_istable(L, 1))
        throw ConfigError(str_cat(info.name, " takes a table of fields (", info.name, " { field = value }), got ",
                                  describe_item(context, read_item(L, 1))));
      fields = read_fields(L, 1, info.name);
      for (auto& [field, item] : fields) {
        const auto* other = std::get_if<Unsupported>(&item);
        if (other == nullptr) continue;
        const auto spec =
            std::find_if(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == field; });
        if (spec == info.fields.end()) continue;
        if (other->type_name == "table" && spec->type == FieldType::IntList) {
          item = read_int_list(L, context, info, field);
        } else if (other->type_name == "table" && spec->type == FieldType::NumberList) {
          item = read_number_list(L, context, info, field);
        } else if (other->type_name == "function" && spec->per_step) {
          // A function given to a per-step field (`ratio = function(epoch, step) ... end`) is
          // kept for the workers and stands in the spec as its id.
          lua_getfield(L, 1, field.c_str());
          item = Value{StepFunction{register_step_function(L, -1)}};
          lua_pop(L, 1);
        }
      }
    }
    resolve_files(context, info, fields);
    if (const auto sweep = random_inside(context, info, fields)) {
      index = *sweep;
      is_sweep = true;
    } else if (const auto sweep = sweep_inside(context, info, fields)) {
      index = *sweep;
      is_sweep = true;
      for (Choice& choice : context.sweeps[index].alternatives)
        if (auto* component = std::get_if<Component>(&choice)) component->location = location;
    } else {
      context.components.push_back(build_component(context, info, fields));
      context.components.back().location = location;
      index = context.components.size() - 1;
    }
  }
  push_handle(L, index, is_sweep ? kSweepMeta : kComponentMeta);
  return 1;
}

int construct(lua_State* L) { return call_guarded(L, construct_body); }

int sweep_body(lua_State* L) {
  LoadContext& context = context_of(L);
  std::size_t index = 0;
  {
    if (lua_gettop(L) != 1 || !lua_istable(L, 1))
      throw ConfigError(str_cat("sweep takes a list of alternatives (sweep { a, b, ... }), got ",
                                lua_gettop(L) == 0 ? std::string("nothing") : describe_item(context, read_item(L, 1))));
    // `group = "name"`: sweeps of the same group are paired. Taken out of the (temporary)
    // table so that the rest reads as a plain list.
    std::string group;
    if (lua_getfield(L, 1, "group") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
        throw ConfigError(
            str_cat("sweep.group must be a non-empty string, got ", describe_item(context, read_item(L, -1))));
      group = lua_tostring(L, -1);
      lua_pushnil(L);
      lua_setfield(L, 1, "group");
    }
    lua_pop(L, 1);
    const std::vector<LuaItem> items = read_list(L, 1, "sweep");
    if (items.empty()) throw ConfigError("sweep { } needs at least one alternative");
    std::vector<Choice> alternatives;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (const auto* value = std::get_if<Value>(&items[i]))
        alternatives.emplace_back(*value);
      else if (const auto* ref = std::get_if<ComponentRef>(&items[i]))
        alternatives.emplace_back(context.components[ref->index]);
      else if (const auto* inner = std::get_if<SweepRef>(&items[i]);
               inner != nullptr && context.sweeps[inner->index].group.empty() && !context.sweeps[inner->index].random &&
               std::holds_alternative<Component>(context.sweeps[inner->index].alternatives[0]))
        // topk { ratio = sweep { ... } } among the alternatives: its components, in order.
        // Named like any alternative (compressor=topk,ratio=0.1), not by the inner sweep alone.
        for (Choice c : context.sweeps[inner->index].alternatives) {
          std::get<Component>(c).swept_fields.clear();
          alternatives.push_back(std::move(c));
        }
      else
        throw ConfigError(str_cat("sweep alternative ", i + 1, " must be a component, bool, number or string, got ",
                                  describe_item(context, items[i]),
                                  std::holds_alternative<SweepRef>(items[i])
                                      ? " (sweeps do not nest, but a component with a sweep "
                                        "inside, ungrouped, may be an alternative)"
                                      : ""));
    }
    context.sweeps.push_back({std::move(alternatives), std::move(group), std::nullopt});
    index = context.sweeps.size() - 1;
  }
  push_handle(L, index, kSweepMeta);
  return 1;
}

int sweep(lua_State* L) { return call_guarded(L, sweep_body); }

/// tostring(topk { ratio = 0.01 }) -> "topk { ratio = 0.01 }", for print-debugging files.
int component_tostring(lua_State* L) {
  const LoadContext& context = context_of(L);
  const auto ref = std::get<ComponentRef>(read_item(L, 1));
  const Component& component = context.components[ref.index];
  std::string text = component.written.name;
  if (component.written_order.empty()) {
    text += "()";
  } else {
    text += " {";
    for (const auto& field : component.written_order)
      text += str_cat(" ", field, " = ", format_value(component.written.fields.at(field)), ",");
    text.back() = ' ';
    text += "}";
  }
  // If this push runs out of Lua memory, `text` leaks: the state is closed right after.
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int sweep_tostring(lua_State* L) {
  const auto ref = std::get<SweepRef>(read_item(L, 1));
  lua_pushfstring(L, "sweep of %d alternatives", static_cast<int>(context_of(L).sweeps[ref.index].alternatives.size()));
  return 1;
}

int register_all(lua_State* L) {
  auto* context = static_cast<LoadContext*>(lua_touserdata(L, 1));
  new_handle_metatable(L, context, kComponentMeta, component_tostring);
  new_handle_metatable(L, context, kSweepMeta, sweep_tostring);
  for (std::size_t i = 0; i < context->constructors.size(); ++i) {
    lua_pushlightuserdata(L, context);
    lua_pushinteger(L, static_cast<lua_Integer>(i));
    lua_pushcclosure(L, construct, 2);
    lua_setglobal(L, context->constructors[i].name.c_str());
  }
  lua_pushlightuserdata(L, context);
  lua_pushcclosure(L, sweep, 1);
  lua_setglobal(L, "sweep");

  // What the "undefined global" error offers: the names, and a line grouping them by kind.
  lua_createtable(L, static_cast<int>(context->constructors.size()), 0);
  std::map<std::string, std::string> by_kind;
  for (std::size_t i = 0; i < context->constructors.size(); ++i) {
    const ComponentInfo& info = context->constructors[i];
    lua_pushstring(L, info.name.c_str());
    lua_seti(L, -2, static_cast<lua_Integer>(i + 1));
    std::string& names = by_kind[info.kind];
    names += (names.empty() ? "" : ", ") + info.name;
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kConstructorNamesKey);
  std::string hint;
  for (const auto& [kind, names] : by_kind) hint += (hint.empty() ? "" : "; ") + kind + ": " + names;
  lua_pushstring(L, hint.c_str());
  lua_setfield(L, LUA_REGISTRYINDEX, kConstructorHintKey);
  std::set<std::string> fields;
  for (const ExperimentField& f : experiment_fields()) fields.insert(f.name);
  for (const ComponentInfo& info : context->constructors)
    for (const FieldSpec& f : info.fields) fields.insert(f.name);
  lua_createtable(L, 0, static_cast<int>(fields.size()));
  for (const std::string& f : fields) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, f.c_str());
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kFieldNamesKey);
  return 0;
}

}  // namespace

Component build_component(const LoadContext& context, const ComponentInfo& info,
                          const std::vector<std::pair<std::string, LuaItem>>& fields) {
  Component component;
  component.written.kind = info.kind;
  component.written.name = info.name;
  for (const auto& [field, item] : fields) {
    const auto spec =
        std::find_if(info.fields.begin(), info.fields.end(), [&](const FieldSpec& f) { return f.name == field; });
    const bool wants_component = spec != info.fields.end() && spec->type == FieldType::Component;
    const auto* ref = std::get_if<ComponentRef>(&item);
    if (ref != nullptr && wants_component) {
      // chain { first = topk {} }: a nested component; the catalog checks its kind.
      component.written.fields[field] = nested(context.components[ref->index].written);
      continue;
    }
    const auto* value = std::get_if<Value>(&item);
    // A field the component does not have: say that, not what its value should have been.
    if (value == nullptr && spec == info.fields.end()) throw ConfigError(info.unknown_field(field, true));
    if (value == nullptr || wants_component)
      throw ConfigError(str_cat(info.name, ".", field, " must be ",
                                wants_component ? (spec->component_kind.empty()
                                                       ? str_cat("a ", info.kind, " component")
                                                       : str_cat("a component of kind ", spec->component_kind))
                                : spec != info.fields.end() ? field_type_phrase(spec->type)
                                                            : std::string("a bool, number or string"),
                                ", got ", describe_item(context, item)));
    component.written.fields[field] = *value;
  }
  component.resolved = context.catalog.resolve(component.written);
  component.written_order = written_order_of(info, component.written);
  return component;
}

std::vector<std::string> written_order_of(const ComponentInfo& info, const ComponentSpec& written) {
  std::vector<std::string> order;
  for (const FieldSpec& spec : info.fields)
    if (written.fields.count(spec.name)) order.push_back(spec.name);
  // A catalog may accept fields its info does not list; keep them, after the listed ones.
  for (const auto& [field, value] : written.fields)
    if (std::find(order.begin(), order.end(), field) == order.end()) order.push_back(field);
  return order;
}

void install_constructors(SandboxedState& state, LoadContext& context) {
  std::map<std::string, std::string> kind_of;
  for (const std::string& kind : context.catalog.kinds()) {
    for (ComponentInfo& info : context.catalog.infos(kind)) {
      if (info.internal) continue;  // set by the DSL itself, never written
      if (kReservedNames.count(info.name))
        throw InvariantError(str_cat(kind, " '", info.name, "' would hide the Lua global of the same name"));
      auto [it, fresh] = kind_of.emplace(info.name, kind);
      if (!fresh)
        throw InvariantError(str_cat("component name '", info.name, "' is defined by both ", it->second, " and ", kind,
                                     "; each Lua constructor needs a unique name"));
      if (info.kind.empty()) info.kind = kind;
      context.constructors.push_back(std::move(info));
    }
  }
  state.call_protected(register_all, &context);
}

}  // namespace laconic::lua
