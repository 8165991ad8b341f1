#include "lua/random_search.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "engine/core/error.hpp"
#include "lua/constructors.hpp"
#include "lua/lua_value.hpp"

namespace laconic::lua {

namespace {

double number_argument(lua_State* L, int index, const char* function, const char* what) {
  if (lua_type(L, index) != LUA_TNUMBER)
    throw ConfigError(str_cat(function, "(low, high) takes two numbers; ", what, " is a ", luaL_typename(L, index)));
  return lua_tonumber(L, index);
}

/// uniform(a, b), log_uniform(a, b), int(a, b): upvalue 2 is the kind (a DistributionKind).
int bounded_body(lua_State* L) {
  LoadContext& context = context_of(L);
  const auto which = static_cast<DistributionKind>(lua_tointeger(L, lua_upvalueindex(2)));
  const std::string kind = distribution_name(which);
  std::size_t index = 0;
  {
    Distribution d;
    d.kind = which;
    d.low = number_argument(L, 1, kind.c_str(), "low");
    d.high = number_argument(L, 2, kind.c_str(), "high");
    if (lua_gettop(L) != 2)
      throw ConfigError(str_cat(kind, "(low, high) takes two numbers, got ", lua_gettop(L), " arguments"));
    if (!(std::isfinite(d.low) && std::isfinite(d.high) && d.low < d.high))
      throw ConfigError(str_cat(kind, "(low, high) needs finite low < high, got (", d.low, ", ", d.high, ")"));
    if (which == DistributionKind::LogUniform && !(d.low > 0))
      throw ConfigError(str_cat("log_uniform(low, high) needs low > 0, got ", d.low));
    if (which == DistributionKind::Int && (std::trunc(d.low) != d.low || std::trunc(d.high) != d.high))
      throw ConfigError(str_cat("int(low, high) takes integer bounds, got (", d.low, ", ", d.high, ")"));
    context.distributions.push_back(std::move(d));
    index = context.distributions.size() - 1;
  }
  push_handle(L, index, kDistributionMeta);
  return 1;
}

int bounded(lua_State* L) { return call_guarded(L, bounded_body); }

/// `uniform` is also a compressor: uniform(a, b) with a number first is the distribution,
/// anything else (uniform { bits = 8 }, uniform()) goes to the constructor in upvalue 3. No
/// C++ object lives in this frame, so the constructor's Lua errors may unwind through it.
int uniform_dispatch(lua_State* L) {
  if (lua_type(L, 1) == LUA_TNUMBER) return bounded(L);
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int choice_body(lua_State* L) {
  LoadContext& context = context_of(L);
  std::size_t index = 0;
  {
    if (lua_gettop(L) != 1 || !lua_istable(L, 1))
      throw ConfigError("choice takes a list of values (choice { a, b, ... })");
    Distribution d;
    d.kind = DistributionKind::Choice;
    const std::vector<LuaItem> items = read_list(L, 1, "choice");
    if (items.empty()) throw ConfigError("choice { } needs at least one value");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto* value = std::get_if<Value>(&items[i]);
      if (value == nullptr)
        throw ConfigError(str_cat("choice value ", i + 1, " must be a bool, number or string ",
                                  "(components are swept with sweep { ... })"));
      d.options.push_back(*value);
    }
    context.distributions.push_back(std::move(d));
    index = context.distributions.size() - 1;
  }
  push_handle(L, index, kDistributionMeta);
  return 1;
}

int choice(lua_State* L) { return call_guarded(L, choice_body); }

int distribution_tostring(lua_State* L) {
  const auto ref = std::get<DistributionRef>(read_item(L, 1));
  const std::string text = describe_distribution(context_of(L).distributions[ref.index]);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int register_distributions(lua_State* L) {
  auto* context = static_cast<LoadContext*>(lua_touserdata(L, 1));
  new_handle_metatable(L, context, kDistributionMeta, distribution_tostring);
  for (const DistributionKind which : {DistributionKind::Uniform, DistributionKind::LogUniform, DistributionKind::Int}) {
    const char* kind = distribution_name(which);
    lua_pushlightuserdata(L, context);
    lua_pushinteger(L, static_cast<lua_Integer>(which));
    // Raw: reading an undefined global is an error in the sandbox.
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushstring(L, kind);
    const bool constructor = lua_rawget(L, -2) == LUA_TFUNCTION;
    lua_remove(L, -2);  // the globals table
    if (constructor) {  // a component of that name: dispatch on the arguments
      lua_pushcclosure(L, uniform_dispatch, 3);
    } else {
      lua_pop(L, 1);
      lua_pushcclosure(L, bounded, 2);
    }
    lua_setglobal(L, kind);
  }
  lua_pushlightuserdata(L, context);
  lua_pushcclosure(L, choice, 1);
  lua_setglobal(L, "choice");
  return 0;
}

/// SplitMix64 (Steele et al. 2014): a small, well-mixed deterministic stream.
struct SampleRng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

/// Four significant digits, so that a run's name shows the value it ran with.
double round4(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return std::strtod(text, nullptr);
}

Value draw(const Distribution& d, SampleRng& rng) {
  switch (d.kind) {
    case DistributionKind::Choice: return d.options[rng.next() % d.options.size()];
    case DistributionKind::Int: {
      const auto span = static_cast<std::uint64_t>(d.high - d.low) + 1;
      return static_cast<std::int64_t>(d.low) + static_cast<std::int64_t>(rng.next() % span);
    }
    case DistributionKind::LogUniform:
      return round4(std::exp(std::log(d.low) + rng.unit() * (std::log(d.high) - std::log(d.low))));
    case DistributionKind::Uniform: break;
  }
  return round4(d.low + rng.unit() * (d.high - d.low));
}

}  // namespace

const char* distribution_name(DistributionKind kind) {
  switch (kind) {
    case DistributionKind::LogUniform: return "log_uniform";
    case DistributionKind::Int: return "int";
    case DistributionKind::Choice: return "choice";
    case DistributionKind::Uniform: break;
  }
  return "uniform";
}

std::vector<Value> Distribution::probe_values() const {
  if (kind == DistributionKind::Choice) return options;
  if (kind == DistributionKind::Int) return {Value{static_cast<std::int64_t>(low)}};
  return {Value{low}};
}

std::string describe_distribution(const Distribution& d) {
  if (d.kind != DistributionKind::Choice) return str_cat(distribution_name(d.kind), "(", d.low, ", ", d.high, ")");
  std::string out = "choice { ";
  for (std::size_t i = 0; i < d.options.size(); ++i) out += (i ? ", " : "") + format_value(d.options[i]);
  return out + " }";
}

void install_distributions(SandboxedState& state, LoadContext& context) {
  state.call_protected(register_distributions, &context);
}

void draw_random_samples(LoadContext& context, ExperimentDraft& draft,
                         const std::function<Choice(const std::string& field, const Choice& choice)>& check) {
  // The distributions the experiment uses, in field order.
  std::vector<std::size_t> used;
  std::vector<std::pair<std::string, FieldChoices*>> random_fields;
  for (auto& [name, choices] : draft.fields) {
    if (choices.distribution) used.push_back(*choices.distribution);
    if (choices.random)
      for (const auto& [field, d] : choices.random->drawn) used.push_back(d);
    if (choices.distribution || choices.random) random_fields.emplace_back(name, &choices);
  }
  if (used.empty()) {
    if (draft.sampling.samples > 0)
      throw ConfigError(
          "random = { n = ... } and tune = { trials = ... } need distributions "
          "to draw from: write "
          "uniform(a, b), log_uniform(a, b), int(a, b) or choice { ... } where a "
          "value goes");
    return;
  }
  if (draft.sampling.samples == 0)
    throw ConfigError(str_cat("the experiment draws values from ",
                              describe_distribution(context.distributions[used.front()]),
                              "; say how many samples with random = { n = 8 }"));
  SampleRng rng{static_cast<std::uint64_t>(draft.sampling.sample_seed) * 0x2545f4914f6cdd1dULL + 1};
  std::set<std::vector<std::string>> seen;
  std::vector<std::map<std::size_t, Value>> samples;
  for (std::int64_t attempt = 0; static_cast<std::int64_t>(samples.size()) < draft.sampling.samples; ++attempt) {
    if (attempt >= 100 * draft.sampling.samples)
      throw ConfigError(str_cat("random = { n = ", draft.sampling.samples, " } asks for more distinct ",
                                "samples than the distributions give (found ", samples.size(), ")"));
    std::map<std::size_t, Value> sample;
    std::vector<std::string> key;
    for (std::size_t d : used) {
      if (!sample.count(d)) sample[d] = draw(context.distributions[d], rng);
      key.push_back(format_value(sample[d]));
    }
    if (seen.insert(key).second) samples.push_back(std::move(sample));
  }
  for (auto& [name, choices] : random_fields) {
    choices->alternatives.clear();
    choices->swept = true;
    choices->group = kRandomGroup;
    for (const auto& sample : samples) {
      if (choices->distribution) {
        choices->alternatives.push_back(check(name, Value{sample.at(*choices->distribution)}));
        continue;
      }
      const RandomTemplate& t = *choices->random;
      std::vector<std::pair<std::string, LuaItem>> fields;
      for (const auto& [field, value] : t.fixed) fields.emplace_back(field, value);
      for (const auto& [field, c] : t.fixed_components) fields.emplace_back(field, ComponentRef{c});
      std::vector<std::string> drawn;
      for (const auto& [field, d] : t.drawn) {
        fields.emplace_back(field, sample.at(d));
        drawn.push_back(field);
      }
      std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      Component component = build_component(context, context.constructors[t.constructor], fields);
      component.swept_fields = drawn;
      choices->alternatives.push_back(check(name, std::move(component)));
    }
  }
}

}  // namespace laconic::lua
