#pragma once
// What the Lua functions of one load share: the catalog, the components and sweeps the file
// has built so far, and the experiment it declared. Owned by load_experiment(); the Lua
// closures reach it through a light-userdata upvalue, so there is no global state.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/core/catalog.hpp"
#include "engine/core/component.hpp"
#include "engine/core/goal.hpp"

struct lua_State;
#include "engine/core/metric_keys.hpp"
#include "engine/core/value.hpp"

namespace laconic::lua {

/// One constructor call: what the user wrote and what the catalog made of it.
struct Component {
  ComponentSpec written;                   ///< only the fields given explicitly
  ComponentSpec resolved;                  ///< every field, defaults filled
  std::vector<std::string> written_order;  ///< written field names, in the catalog's order
  /// Set when a sweep inside the constructor made it (`sgd { lr = sweep { ... } }`): only these
  /// fields, not every written one, name its runs.
  std::vector<std::string> swept_fields;
  std::string location;  ///< "file:line: " of the constructor call; "" for defaults
};

/// One value an experiment field may take: a scalar or a component.
using Choice = std::variant<Value, Component>;

/// One `uniform(a, b)`, `log_uniform(a, b)`, `int(a, b)` or `choice { ... }` call: where a
/// random search draws a field's value from (docs/dsl.md, "Random search").
/// The distributions of a random search, as the file names them (distribution_name).
enum class DistributionKind { Uniform, LogUniform, Int, Choice };

/// "uniform", "log_uniform", "int" or "choice": the function that writes it in a file.
const char* distribution_name(DistributionKind kind);

struct Distribution {
  DistributionKind kind = DistributionKind::Uniform;
  double low = 0, high = 0;    ///< bounds (inclusive for int)
  std::vector<Value> options;  ///< choice's values

  /// The values a field given it is checked with when the file loads (before any is drawn):
  /// every choice, else the lower bound (an integer for int).
  std::vector<Value> probe_values() const;
};

/// A constructor call with distributions among its fields (`sgd { lr = log_uniform(...) }`):
/// built once per sample of the random search, when the experiment says how many.
struct RandomTemplate {
  std::size_t constructor = 0;                                        ///< index into LoadContext::constructors
  std::vector<std::pair<std::string, Value>> fixed;                   ///< fields given plainly
  std::vector<std::pair<std::string, std::size_t>> fixed_components;  ///< component fields
  std::vector<std::pair<std::string, std::size_t>> drawn;             ///< field -> distribution index
};

/// The values one experiment field takes: one, or several from a `sweep { ... }`.
struct FieldChoices {
  std::vector<Choice> alternatives;
  bool swept = false;
  std::string group;  ///< sweeps of one group advance together (paired), not as a product
  /// Set for a field drawn by the random search: a distribution (scalar field) or a template
  /// (component field); `alternatives` is filled with one value per sample.
  std::optional<std::size_t> distribution;
  std::optional<RandomTemplate> random;
};

/// One `sweep { a, b, ..., group = "g" }` call, or a constructor made random (`random` set,
/// `alternatives` empty until the experiment's samples are drawn).
struct SweepDef {
  std::vector<Choice> alternatives;
  std::string group;  ///< empty: an axis of its own
  std::optional<RandomTemplate> random;
};

/// `random = { n, seed }` or `tune = { trials, metric, goal, seed }`: the joint samples of the
/// file's distributions to draw, and for tuning what picks the best.
struct Sampling {
  std::int64_t samples = 0;      ///< `random = { n = N }` or `tune = { trials = N }`: 0 when not given
  std::int64_t sample_seed = 1;  ///< their `seed = S`
  bool tune = false;             ///< `tune = { ... }` instead of `random`
  std::string tune_metric = keys::kTestAccuracy;
  Goal tune_goal = Goal::Max;
};

/// The `experiment { ... }` table, checked field by field but not yet expanded.
struct ExperimentDraft {
  std::string location;                        ///< "file:line: " of the experiment call
  std::string name;                            ///< the `name` field
  std::map<std::string, FieldChoices> fields;  ///< given fields other than name and seeds
  std::vector<std::int64_t> seeds;             ///< empty when the file gives none
  std::int64_t repeat = 0;                     ///< `repeats = N`: seeds 1..N; 0 when not given
  std::int64_t runs_per_seed = 1;              ///< `runs_per_seed = N`: each seed trained N times
  Sampling sampling;
};

/// State shared by the Lua functions of one load.
struct LoadContext {
  explicit LoadContext(const Catalog& c) : catalog(c) {}

  const Catalog& catalog;
  std::vector<ComponentInfo> constructors;  ///< one per global constructor
  std::vector<Component> components;        ///< one per constructor call (userdata index)
  std::vector<SweepDef> sweeps;             ///< one per sweep call (userdata index)
  std::vector<Distribution> distributions;  ///< one per distribution call (userdata index)
  std::optional<ExperimentDraft> draft;     ///< set by the experiment call
  std::vector<std::string> callbacks;       ///< experiment fields given as functions
  std::string directory;                    ///< of the experiment file, with a trailing '/'
  std::string included;                     ///< every included file's path and text, in order
  int include_depth = 0;                    ///< includes being run right now
};

/// The load's context, from the light-userdata upvalue 1 that every Lua function of a load is
/// registered with.
LoadContext& context_of(lua_State* L);

/// The Lua registry key under which the experiment's function for `field` is kept.
inline std::string callback_key(const std::string& field) { return "laconic.callback." + field; }

/// Experiment fields that may be given as functions (docs/dsl.md, "Callbacks").
inline const std::vector<std::string>& callback_fields() {
  static const std::vector<std::string> kFields = {"lr_schedule", "on_epoch_end", "where"};
  return kFields;
}

/// "component topk" or "int 64": how a choice is named in error messages.
std::string describe_choice(const Choice& choice);

}  // namespace laconic::lua
