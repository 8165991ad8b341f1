#include "lua/experiment_table.hpp"

#include <algorithm>
#include <fstream>

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/core/goal.hpp"
#include "engine/core/metric_keys.hpp"
#include "lua/fields.hpp"
#include "lua/random_search.hpp"

namespace laconic::lua {

std::string describe_choice(const Choice& choice) {
  if (const auto* value = std::get_if<Value>(&choice))
    return str_cat(value_type_name(*value), " ", format_value(*value));
  const auto& component = std::get<Component>(choice);
  return str_cat(component.written.kind, " '", component.written.name, "'");
}

namespace {

std::string describe(const LoadContext& context, const LuaItem& item) {
  if (const auto* value = std::get_if<Value>(&item)) return describe_choice(*value);
  if (const auto* ref = std::get_if<ComponentRef>(&item)) return describe_choice(context.components[ref->index]);
  if (std::holds_alternative<SweepRef>(item)) return "a sweep";
  if (std::holds_alternative<DistributionRef>(item)) return "a distribution";
  return describe_unsupported(std::get<Unsupported>(item));
}

std::string known_names(const Catalog& catalog, const std::string& kind) {
  std::string out;
  for (const ComponentInfo& info : catalog.infos(kind)) out += (out.empty() ? "" : ", ") + info.name + "()";
  return out.empty() ? "(none)" : out;
}

/// An integer, also from a float with an integral value (`2^6` is a float in Lua 5.4).
std::optional<std::int64_t> as_integer(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value))
    if (std::isfinite(*d) && std::trunc(*d) == *d && std::fabs(*d) < 9.0e18) return static_cast<std::int64_t>(*d);
  return std::nullopt;
}

/// What a field accepts, for messages: "a model (known: lenet5())", "an int >= 1".
std::string expectation(const LoadContext& context, const ExperimentField& field) {
  switch (field.type) {
    case ExperimentFieldType::Component:
      return str_cat("a ", field.run->kind, " (known: ", known_names(context.catalog, field.run->kind), ")");
    case ExperimentFieldType::Int:
      return str_cat("an int >= ", field.run ? field.run->minimum : 1);
    case ExperimentFieldType::Number:
      return field.run->zero_allowed ? "a number >= 0" : "a number > 0";
    case ExperimentFieldType::String:
      return "a non-empty string";
    case ExperimentFieldType::IntList:
      return "a list of integers such as { 1, 2, 3 }";
    case ExperimentFieldType::Choice: {
      if (field.run->choices == std::vector<std::string>{"false", "true"}) return "true or false";
      std::string words;
      for (const std::string& word : field.run->choices) words += str_cat(words.empty() ? "" : " or ", "\"", word, "\"");
      return words;
    }
  }
  return "?";
}

}  // namespace

/// Checks one alternative of a field; `where` is "" or " (sweep alternative 2)".
Choice check_choice(const LoadContext& context, const ExperimentField& field, const Choice& choice,
                    const std::string& where) {
  const auto fail = [&] {
    return ConfigError(str_cat("experiment field '", field.name, "'", where, " must be ", expectation(context, field),
                               ", got ", describe_choice(choice)));
  };
  if (field.type == ExperimentFieldType::Component) {
    const auto* component = std::get_if<Component>(&choice);
    if (component == nullptr || component->written.kind != field.run->kind) throw fail();
    return choice;
  }
  const auto* value = std::get_if<Value>(&choice);
  if (field.type == ExperimentFieldType::Int) {
    const auto integer = value ? as_integer(*value) : std::nullopt;
    if (!integer || *integer < (field.run ? field.run->minimum : 1)) throw fail();
    return Value{*integer};
  }
  if (field.type == ExperimentFieldType::Number) {
    const double* d = value ? std::get_if<double>(value) : nullptr;
    const std::int64_t* i = value ? std::get_if<std::int64_t>(value) : nullptr;
    const double number = d ? *d : i ? static_cast<double>(*i) : 0.0;
    const bool in_range = field.run->zero_allowed ? number >= 0 : number > 0;
    if ((!d && !i) || !in_range || !std::isfinite(number)) throw fail();
    return Value{number};
  }
  if (field.type == ExperimentFieldType::Choice) {
    // A choice of the words "false" and "true" (elastic) takes Lua's booleans as them.
    if (const bool* b = value ? std::get_if<bool>(value) : nullptr) return check_choice(context, field, Value{std::string(*b ? "true" : "false")}, where);
    const std::string* text = value ? std::get_if<std::string>(value) : nullptr;
    if (text == nullptr ||
        std::none_of(field.run->choices.begin(), field.run->choices.end(),
                     [&](const std::string& word) { return *text == word; }))
      throw fail();
    return choice;
  }
  throw InvariantError(str_cat("experiment field '", field.name, "' has no alternatives"));
}

namespace {

/// A ConfigError about one field of the experiment table, so that the call can point at its line.
class FieldError : public ConfigError {
 public:
  FieldError(const std::string& message, std::string field) : ConfigError(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/// The first line, from the running call's line on, that assigns `field` (`field = ...`), in the
/// file the call is in; 0 when it cannot be told (a chunk that is not a file). Lua keeps no line
/// per table field: a multi-line `experiment { ... }` call is all on its first line.
int field_line(lua_State* L, const std::string& field) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) == 0 || lua_getinfo(L, "Sl", &ar) == 0 || ar.source == nullptr || ar.source[0] != '@')
    return 0;
  std::ifstream in(ar.source + 1);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    if (++number < ar.currentline) continue;
    line = line.substr(0, line.find("--"));
    for (std::size_t at = line.find(field); at != std::string::npos; at = line.find(field, at + 1)) {
      if (at > 0 && word_char(line[at - 1])) continue;
      std::size_t next = at + field.size();
      if (next < line.size() && word_char(line[next])) continue;
      while (next < line.size() && (line[next] == ' ' || line[next] == '\t')) ++next;
      if (next < line.size() && line[next] == '=' && (next + 1 == line.size() || line[next + 1] != '=')) return number;
    }
  }
  return 0;
}

std::vector<std::int64_t> parse_seeds(const LoadContext& context, const std::vector<LuaItem>& items) {
  if (items.empty()) throw ConfigError("experiment field 'seeds' must list at least one seed");
  std::vector<std::int64_t> seeds;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto* value = std::get_if<Value>(&items[i]);
    const auto integer = value ? as_integer(*value) : std::nullopt;
    if (!integer)
      throw ConfigError(str_cat("experiment field 'seeds' must list integers, got ", describe(context, items[i]),
                                " at position ", i + 1));
    for (std::int64_t seen : seeds)
      if (seen == *integer) throw ConfigError(str_cat("experiment field 'seeds' lists seed ", seen, " twice"));
    seeds.push_back(*integer);
  }
  return seeds;
}

/// Takes the file's functions (callbacks) out of the experiment table at index 1 into the
/// registry, where the workers find them; refuses a callback field that is not a function.
void take_callbacks(lua_State* L, LoadContext& context) {
  for (const std::string& field : callback_fields()) {
    const int type = lua_getfield(L, 1, field.c_str());
    if (type == LUA_TFUNCTION) {
      lua_setfield(L, LUA_REGISTRYINDEX, callback_key(field).c_str());
      lua_pushnil(L);
      lua_setfield(L, 1, field.c_str());
      context.callbacks.push_back(field);
      continue;
    }
    lua_pop(L, 1);
    if (field == "on_epoch_end" && type != LUA_TNIL)
      throw ConfigError(str_cat("experiment field 'on_epoch_end' must be a function(ctx) returning true to stop, got a ",
                                lua_typename(L, type)));
    if (field == "where" && type != LUA_TNIL)
      throw ConfigError(
          str_cat("experiment field 'where' must be a function(run) returning true for the runs to keep, got a ",
                  lua_typename(L, type)));
  }
}

/// Pushes the experiment table's field `name` (at index 1) and returns its Lua type; the caller
/// pops it. A table field is taken out of the experiment table with take_field().
int push_field(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  return lua_rawget(L, 1);
}

void take_field(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_pushnil(L);
  lua_rawset(L, 1);
}

/// An int field of `random` or `tune` ("random.n must be an int >= 1, got ...").
std::int64_t sampling_int(const LoadContext& context, const std::string& table, const std::string& key,
                          const LuaItem& item, bool positive) {
  const auto* value = std::get_if<Value>(&item);
  const auto integer = value ? as_integer(*value) : std::nullopt;
  if (!integer || (positive && *integer < 1))
    throw ConfigError(
        str_cat(table, ".", key, " must be an int", positive ? " >= 1" : "", ", got ", describe(context, item)));
  return *integer;
}

/// random = { n = N, seed = S }: how many joint samples of the distributions to draw.
void read_random(lua_State* L, const LoadContext& context, Sampling& draft) {
  const int type = push_field(L, "random");
  if (type != LUA_TNIL) {
    if (type != LUA_TTABLE)
      throw ConfigError(
          str_cat("experiment field 'random' must be a table { n = N, seed = S }, got a ", lua_typename(L, type)));
    for (const auto& [key, item] : read_fields(L, -1, "random")) {
      if (key != "n" && key != "seed") throw ConfigError(str_cat("random takes n and seed, got '", key, "'"));
      (key == "n" ? draft.samples : draft.sample_seed) = sampling_int(context, "random", key, item, key == "n");
    }
    if (draft.samples == 0) throw ConfigError("random = { ... } needs n, the number of samples");
    take_field(L, "random");
  }
  lua_pop(L, 1);
}

/// tune = { trials = N, metric = "test_accuracy", goal = "max", seed = S }: random search per
/// configuration, then the best trial of each on every seed (the controller decides which).
void read_tune(lua_State* L, const LoadContext& context, Sampling& draft) {
  const int type = push_field(L, "tune");
  if (type != LUA_TNIL) {
    if (type != LUA_TTABLE)
      throw ConfigError(str_cat("experiment field 'tune' must be a table { trials = N, metric = ",
                                "\"test_accuracy\", goal = \"max\" }, got a ", lua_typename(L, type)));
    if (draft.samples > 0) throw ConfigError("give either random = { ... } or tune = { ... }, not both");
    for (const auto& [key, item] : read_fields(L, -1, "tune")) {
      const auto* value = std::get_if<Value>(&item);
      const auto* text = value ? std::get_if<std::string>(value) : nullptr;
      if (key == "trials" || key == "seed") {
        (key == "trials" ? draft.samples : draft.sample_seed) = sampling_int(context, "tune", key, item, key == "trials");
      } else if (key == "metric") {
        if (text == nullptr || text->empty())
          throw ConfigError(str_cat("tune.metric must be a metric name, got ", describe(context, item)));
        draft.tune_metric = *text;
      } else if (key == "goal") {
        const auto goal = text ? parse_goal(*text) : std::nullopt;
        if (!goal) throw ConfigError(str_cat("tune.goal must be \"max\" or \"min\", got ", describe(context, item)));
        draft.tune_goal = *goal;
      } else {
        throw ConfigError(str_cat("tune takes trials, metric, goal and seed, got '", key, "'"));
      }
    }
    if (draft.samples == 0) throw ConfigError("tune = { ... } needs trials, the number of samples");
    draft.tune = true;
    take_field(L, "tune");
  }
  lua_pop(L, 1);
}

/// A component field given a plain list of components (`churn = { leave { ... }, join { ... } }`)
/// gets the one component the catalog makes of them, in the table itself.
void combine_component_lists(lua_State* L, LoadContext& context, const std::string& location) {
  for (const auto& [key, item] : read_fields(L, 1, "experiment")) {
    const auto* table = std::get_if<Unsupported>(&item);
    const ExperimentField* field = find_experiment_field(key);
    if (table == nullptr || table->type_name != "table" || field == nullptr ||
        field->type != ExperimentFieldType::Component)
      continue;
    lua_getfield(L, 1, key.c_str());
    const std::vector<LuaItem> items = read_list(L, -1, str_cat("experiment field '", key, "'"));
    lua_pop(L, 1);
    const auto fail = [&](const std::string& message) {
      const int line = field_line(L, key);
      if (line > 0) throw LineConfigError(str_cat("experiment field '", key, "': ", message), line);
      throw ConfigError(str_cat("experiment field '", key, "': ", message));
    };
    std::vector<ComponentSpec> parts;
    for (const LuaItem& part : items) {
      const auto* ref = std::get_if<ComponentRef>(&part);
      if (ref == nullptr) fail(str_cat("a list of components, got ", describe(context, part)));
      parts.push_back(context.components[ref->index].resolved);
    }
    Component combined;
    try {
      combined.resolved = context.catalog.combine(field->run->kind, parts);
    } catch (const ConfigError& e) {
      fail(e.what());
    }
    combined.written = combined.resolved;
    combined.written_order = {};
    for (const auto& [name, value] : combined.written.fields) combined.written_order.push_back(name);
    combined.location = location;
    context.components.push_back(std::move(combined));
    push_handle(L, context.components.size() - 1, kComponentMeta);
    lua_setfield(L, 1, key.c_str());
  }
}

/// The "file:line: " of the experiment { } call; ConfigError when it was called before.
std::string call_location(lua_State* L, const LoadContext& context) {
  luaL_where(L, 1);
  std::string location = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (context.draft) {
    std::string first = context.draft->location;
    while (!first.empty() && (first.back() == ' ' || first.back() == ':')) first.pop_back();
    throw ConfigError(str_cat("experiment { ... } may be called only once; it was already called",
                              first.empty() ? "" : " at ", first));
  }
  return location;
}

int experiment_body(lua_State* L) {
  LoadContext& context = context_of(L);
  std::string location = call_location(L, context);
  if (lua_gettop(L) != 1 || !lua_istable(L, 1))
    throw ConfigError(str_cat("experiment takes one table (experiment { name = \"...\", ... }), got ",
                              lua_gettop(L) == 0 ? "nothing" : describe(context, read_item(L, 1))));
  take_callbacks(L, context);
  combine_component_lists(L, context, location);
  std::optional<std::vector<LuaItem>> seeds;
  if (push_field(L, "seeds") == LUA_TTABLE) seeds = read_list(L, -1, "experiment field 'seeds'");
  lua_pop(L, 1);
  Sampling sampling;
  read_random(L, context, sampling);
  read_tune(L, context, sampling);
  try {
    context.draft = parse_experiment(context, read_fields(L, 1, "experiment"), seeds);
  } catch (const FieldError& e) {
    if (const int line = field_line(L, e.field()); line > 0) throw LineConfigError(e.what(), line);
    throw;
  }
  ExperimentDraft& draft = *context.draft;
  draft.location = std::move(location);
  draft.sampling = sampling;
  draw_random_samples(context, draft, [&](const std::string& name, const Choice& c) {
    return check_choice(context, *find_experiment_field(name), c, " (random sample)");
  });
  if (std::find(context.callbacks.begin(), context.callbacks.end(), "lr_schedule") != context.callbacks.end()) {
    Component lua_function;
    lua_function.written = ComponentSpec{"lr_schedule", "lua_function", {}};
    lua_function.resolved = context.catalog.resolve(lua_function.written);
    draft.fields["lr_schedule"] = FieldChoices{{lua_function}, false, "", std::nullopt, std::nullopt};
  }
  return 0;
}

int experiment(lua_State* L) { return call_guarded(L, experiment_body); }

int register_experiment(lua_State* L) {
  lua_pushvalue(L, 1);  // the LoadContext
  lua_pushcclosure(L, experiment, 1);
  lua_setglobal(L, "experiment");
  return 0;
}

}  // namespace

namespace {

/// Checks one field of the experiment table into `draft`; true for the name.
bool parse_field(const LoadContext& context, const std::string& key, const LuaItem& item,
                 const std::optional<std::vector<LuaItem>>& seeds, ExperimentDraft& draft) {
  const ExperimentField* field = find_experiment_field(key);
  if (field == nullptr) throw ConfigError(unknown_experiment_field(key));
  if (field->type == ExperimentFieldType::String) {
    const auto* value = std::get_if<Value>(&item);
    const auto* text = value ? std::get_if<std::string>(value) : nullptr;
    if (text == nullptr || text->empty())
      throw ConfigError(str_cat("experiment field '", key, "' must be ", expectation(context, *field), ", got ",
                                text ? "an empty string" : describe(context, item)));
    draft.name = *text;
    return true;
  }
  if (key == "repeats" || key == "runs_per_seed") {
    const auto* value = std::get_if<Value>(&item);
    const auto* count = value ? std::get_if<std::int64_t>(value) : nullptr;
    if (count == nullptr || *count < 1)
      throw ConfigError(str_cat("experiment field '", key, "' must be an int >= 1, got ", describe(context, item)));
    (key == "repeats" ? draft.repeat : draft.runs_per_seed) = *count;
    return false;
  }
  if (field->type == ExperimentFieldType::IntList) {
    if (!seeds)
      throw ConfigError(str_cat("experiment field 'seeds' must be ", expectation(context, *field), ", got ",
                                describe(context, item)));
    draft.seeds = parse_seeds(context, *seeds);
    return false;
  }
  FieldChoices choices;
  if (const auto* d = std::get_if<DistributionRef>(&item)) {
    // Drawn later (random = { n = ... }); every value it can give is checked now.
    choices.distribution = d->index;
    for (const Value& probe : context.distributions[d->index].probe_values())
      (void)check_choice(context, *field, probe, "");
  } else if (const auto* sweep = std::get_if<SweepRef>(&item);
             sweep != nullptr && context.sweeps[sweep->index].random) {
    choices.random = context.sweeps[sweep->index].random;
    (void)check_choice(context, *field,
                       Component{ComponentSpec{context.constructors[choices.random->constructor].kind,
                                               context.constructors[choices.random->constructor].name,
                                               {}},
                                 {},
                                 {},
                                 {},
                                 {}},
                       "");
  } else if (const auto* sweep = std::get_if<SweepRef>(&item)) {
    choices.swept = true;
    const auto& alternatives = context.sweeps[sweep->index].alternatives;
    choices.group = context.sweeps[sweep->index].group;
    for (std::size_t i = 0; i < alternatives.size(); ++i)
      choices.alternatives.push_back(
          check_choice(context, *field, alternatives[i], str_cat(" (sweep alternative ", i + 1, ")")));
  } else if (const auto* value = std::get_if<Value>(&item)) {
    choices.alternatives.push_back(check_choice(context, *field, *value, ""));
  } else if (const auto* ref = std::get_if<ComponentRef>(&item)) {
    choices.alternatives.push_back(check_choice(context, *field, context.components[ref->index], ""));
  } else {
    // A function where a component goes is most likely a constructor's own (`model = function ...`
    // by mistake is rare); elsewhere (`workers = function ...`) no call would help.
    const bool function = std::get<Unsupported>(item).type_name == "function" &&
                          std::get<Unsupported>(item).constructor.empty();
    throw ConfigError(str_cat("experiment field '", key, "' must be ", expectation(context, *field), ", got ",
                              describe(context, item),
                              !function                                       ? ""
                              : field->type == ExperimentFieldType::Component ? " (call the constructor: name() or name { ... })"
                                                                              : " (this field takes no function)"));
  }
  draft.fields[key] = std::move(choices);
  return false;
}

}  // namespace

ExperimentDraft parse_experiment(const LoadContext& context, const std::vector<std::pair<std::string, LuaItem>>& fields,
                                 const std::optional<std::vector<LuaItem>>& seeds) {
  ExperimentDraft draft;
  bool named = false;
  for (const auto& [key, item] : fields) {
    try {
      if (parse_field(context, key, item, seeds, draft)) named = true;
    } catch (const ConfigError& e) {
      throw FieldError(e.what(), key);
    }
  }
  if (!named) throw ConfigError("experiment is missing the required field 'name' (a string)");
  if (draft.repeat > 0 && !draft.seeds.empty())
    throw ConfigError("give either seeds = { ... } or repeats = N, not both");
  for (std::int64_t seed = 1; seed <= draft.repeat; ++seed) draft.seeds.push_back(seed);
  return draft;
}

void set_experiment_field(const LoadContext& context, const std::string& key, const LuaItem& item,
                          ExperimentDraft& draft) {
  if (key == "name" || key == "seeds" || key == "repeats" || key == "runs_per_seed")
    throw ConfigError(str_cat("--set ", key, "= takes a plain value, not a Lua expression"));
  parse_field(context, key, item, std::nullopt, draft);
}

void install_experiment(SandboxedState& state, LoadContext& context) {
  state.call_protected(register_experiment, &context);
}

}  // namespace laconic::lua
