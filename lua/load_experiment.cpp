#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "engine/core/error.hpp"
#include "engine/core/hash.hpp"
#include "lua/constructors.hpp"
#include "lua/context.hpp"
#include "lua/experiment.hpp"
#include "lua/experiment_table.hpp"
#include "lua/fields.hpp"
#include "lua/include.hpp"
#include "lua/lua_value.hpp"
#include "lua/overrides.hpp"
#include "lua/random_search.hpp"
#include "lua/state.hpp"
#include "lua/sweep.hpp"

namespace laconic::lua {

namespace {

std::string read_file(const std::string& path) {
  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw ConfigError(str_cat("cannot open experiment file '", path, "': ", std::strerror(errno)));
  std::string bytes;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) bytes.append(buffer, got);
  if (std::ferror(file.get()))
    throw ConfigError(str_cat("cannot read experiment file '", path, "': ", std::strerror(errno)));
  return bytes;
}

/// Pushes (epoch, step): the arguments of a function of where training stands.
auto push_position(std::int64_t epoch, std::int64_t step) {
  return [epoch, step](lua_State* L) {
    lua_pushinteger(L, epoch);
    lua_pushinteger(L, step);
    return 2;
  };
}

/// Reads the number a function returned into `into`; "<call> must return a number, got ..." else.
auto read_number(double& into, std::string call) {
  return [&into, call = std::move(call)](lua_State* L) {
    if (!lua_isnumber(L, -1))
      throw ConfigError(str_cat(call, " must return a number, got ", luaL_typename(L, -1)));
    into = lua_tonumber(L, -1);
  };
}

/// The file's functions, called in its still-open sandbox (the same budgets per call).
class LuaCallbacks : public RunCallbacks {
 public:
  LuaCallbacks(const Catalog& catalog, const LoadOptions& options)
      : context(catalog), state(options.instruction_limit, options.memory_limit) {}

  bool has(const std::string& name) const override {
    return std::find(context.callbacks.begin(), context.callbacks.end(), name) != context.callbacks.end();
  }

  double learning_rate(std::int64_t epoch, std::int64_t step) override {
    double lr = 0;
    state.call_registered(callback_key("lr_schedule").c_str(), push_position(epoch, step),
                          read_number(lr, str_cat("lr_schedule(", epoch, ", ", step, ")")));
    if (!(lr >= 0) || !std::isfinite(lr))
      throw ConfigError(str_cat("lr_schedule(", epoch, ", ", step, ") must return a learning rate >= 0, got ", lr));
    return lr;
  }

  double step_function(const std::string& id, std::int64_t epoch, std::int64_t step) override {
    double value = 0;
    state.call_registered(kStepFunctions, id, push_position(epoch, step),
                          read_number(value, str_cat("the function at ", id, " called with (", epoch, ", ", step, ")")));
    return value;
  }

  /// where(run) with run = { <swept variable> = value, ..., batch_size, workers, epochs }.
  bool keep(const RunConfig& run) {
    bool keep = true;
    state.call_registered(
        callback_key("where").c_str(),
        [&](lua_State* L) {
          lua_createtable(L, 0, static_cast<int>(run.swept.size()) + 3);
          auto set = [&](const std::string& key, const Value& value) {
            if (const auto* b = std::get_if<bool>(&value))
              lua_pushboolean(L, *b);
            else if (const auto* i = std::get_if<std::int64_t>(&value))
              lua_pushinteger(L, *i);
            else if (const auto* d = std::get_if<double>(&value))
              lua_pushnumber(L, *d);
            else if (const auto* s = std::get_if<std::string>(&value))
              lua_pushstring(L, s->c_str());
            else
              lua_pushstring(L, format_value(value).c_str());
            lua_setfield(L, -2, key.c_str());
          };
          set("batch_size", run.batch_size);
          set("workers", run.workers);
          set("epochs", run.epochs);
          for (const auto& [key, value] : run.swept) set(key, value);
          return 1;
        },
        [&](lua_State* L) { keep = lua_toboolean(L, -1) != 0; });
    return keep;
  }

  bool on_epoch_end(std::int64_t epoch, const std::map<std::string, double>& metrics) override {
    bool stop = false;
    state.call_registered(
        callback_key("on_epoch_end").c_str(),
        [&](lua_State* L) {
          lua_createtable(L, 0, static_cast<int>(metrics.size()) + 1);
          lua_pushinteger(L, epoch);
          lua_setfield(L, -2, "epoch");
          for (const auto& [key, value] : metrics) {
            lua_pushnumber(L, value);
            lua_setfield(L, -2, key.c_str());
          }
          return 1;
        },
        [&](lua_State* L) { stop = lua_toboolean(L, -1) != 0; });
    return stop;
  }

  LoadContext context;
  SandboxedState state;
};

/// `--set KEY=EXPRESSION`: a field of the experiment (no dot) that is not a text or the seeds,
/// whose value starts with a call (`compressor=topk{ratio=0.05}`, `compressor=sweep{none(),
/// fp16()}`, `epochs=sweep{1, 3}`); else a plain value.
bool is_lua_expression(const std::string& override) {
  const std::size_t equals = override.find('=');
  if (equals == std::string::npos || override.find('.') < equals) return false;
  const ExperimentField* field = find_experiment_field(override.substr(0, equals));
  if (field == nullptr || field->type == ExperimentFieldType::String || field->type == ExperimentFieldType::IntList)
    return false;
  std::size_t i = equals + 1;
  if (i >= override.size() || !(std::isalpha(static_cast<unsigned char>(override[i])) || override[i] == '_'))
    return false;
  while (i < override.size() && (std::isalnum(static_cast<unsigned char>(override[i])) || override[i] == '_')) ++i;
  while (i < override.size() && override[i] == ' ') ++i;
  return i < override.size() && (override[i] == '(' || override[i] == '{');
}

/// The overrides in the order given: Lua expressions evaluated in the file's state (their
/// components are the file's), plain values as apply_overrides reads them.
void apply_overrides_in_order(LuaCallbacks& loaded, ExperimentDraft& draft, const std::vector<std::string>& overrides) {
  for (const std::string& override : overrides) {
    if (!is_lua_expression(override)) {
      apply_overrides(loaded.context, draft, {override});
      continue;
    }
    const std::string key = override.substr(0, override.find('='));
    const std::string expression = override.substr(key.size() + 1);
    // As for a plain value (lua/overrides.cpp): a field the file swept stays named.
    const bool was_swept = draft.fields.count(key) > 0 && draft.fields.at(key).swept;
    loaded.state.evaluate(expression, "--set " + key, [&](lua_State* L) {
      const LuaItem item = read_item(L, -1);
      try {
        set_experiment_field(loaded.context, key, item, draft);
      } catch (const ConfigError& e) {
        throw ConfigError(str_cat("--set ", key, "=", expression, ": ", e.what()));
      }
    });
    if (was_swept) draft.fields.at(key).swept = true;
  }
}

std::unique_ptr<LuaCallbacks> run_experiment_file(const std::string& path, const Catalog& catalog,
                                                  const LoadOptions& options, ExperimentPlan& plan) {
  plan.file = path;
  const std::string text = read_file(path);
  plan.file_hash = fnv1a_hex(text);
  auto loaded = std::make_unique<LuaCallbacks>(catalog, options);
  const auto slash = path.rfind('/');
  loaded->context.directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  install_constructors(loaded->state, loaded->context);
  install_distributions(loaded->state, loaded->context);
  install_experiment(loaded->state, loaded->context);
  install_include(loaded->state, loaded->context);
  loaded->state.run_file(text, path);
  // Included files are part of the experiment: a change to one changes the hash.
  if (!loaded->context.included.empty()) plan.file_hash = fnv1a_hex(text + loaded->context.included);
  if (!loaded->context.draft) throw ConfigError(str_cat(path, ": the file never calls experiment { ... }"));
  ExperimentDraft& draft = *loaded->context.draft;
  apply_overrides_in_order(*loaded, draft, options.overrides);
  plan.name = draft.name;
  plan.runs = expand_sweeps(draft, catalog);
  if (draft.sampling.tune) {
    ExperimentPlan::Tune tune{draft.sampling.samples, draft.sampling.tune_metric, draft.sampling.tune_goal, {}};
    for (const auto& [name, choices] : draft.fields) {
      if (choices.distribution) tune.drawn.push_back(name);
      if (choices.random)
        for (const auto& [field, d] : choices.random->drawn) tune.drawn.push_back(str_cat(name, ".", field));
    }
    plan.tune = std::move(tune);
  }
  plan.callbacks = loaded->context.callbacks;
  plan.location = draft.location;
  auto remember = [&plan](const Component& c) {
    if (!c.location.empty()) plan.component_locations.emplace(c.resolved.to_json().dump(), c.location);
  };
  for (const Component& c : loaded->context.components) remember(c);
  for (const SweepDef& sweep : loaded->context.sweeps)
    for (const Choice& choice : sweep.alternatives)
      if (const auto* c = std::get_if<Component>(&choice)) remember(*c);
  if (loaded->has("where")) {
    // where(run): constraints that skip combinations. Every worker filters alike.
    std::vector<RunConfig> kept;
    for (RunConfig& run : plan.runs)
      if (loaded->keep(run)) kept.push_back(std::move(run));
    if (kept.empty()) throw ConfigError(str_cat(path, ": where(run) rejected all ", plan.runs.size(), " runs"));
    plan.skipped = plan.runs.size() - kept.size();
    plan.runs = std::move(kept);
  }
  return loaded;
}

}  // namespace

std::string ExperimentPlan::location_of(const ComponentSpec& spec) const {
  const auto it = component_locations.find(spec.to_json().dump());
  return it == component_locations.end() ? location : it->second;
}

ExperimentPlan load_experiment(const std::string& path, const Catalog& catalog, const LoadOptions& options) {
  ExperimentPlan plan;
  run_experiment_file(path, catalog, options, plan);
  return plan;
}

LoadedExperiment load_experiment_with_callbacks(const std::string& path, const Catalog& catalog,
                                                const LoadOptions& options) {
  LoadedExperiment loaded;
  loaded.callbacks = run_experiment_file(path, catalog, options, loaded.plan);
  return loaded;
}

}  // namespace laconic::lua
