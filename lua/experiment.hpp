#pragma once
// Loading an experiment file: run it in a sandboxed Lua state, read its `experiment { ... }`
// table and expand its sweeps and seeds into the runs of a plan. The DSL is described in
// docs/dsl.md.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "engine/core/callbacks.hpp"
#include "engine/core/catalog.hpp"
#include "engine/core/goal.hpp"
#include "engine/core/run_config.hpp"

namespace laconic::lua {

/// What an experiment file asks for: one RunConfig per combination of swept values and seed.
struct ExperimentPlan {
  std::string name;                    ///< experiment name (the `name` field)
  std::string file;                    ///< path of the experiment file, as given
  std::string file_hash;               ///< 64-bit FNV-1a of the file's bytes, 16 lowercase hex digits
  std::vector<RunConfig> runs;         ///< swept fields in field-name order, seeds innermost
  std::vector<std::string> callbacks;  ///< experiment fields the file gave as functions
  std::size_t skipped = 0;             ///< combinations `where(run)` left out
  /// `tune = { trials, metric, goal }`: the runs are every trial on every seed; the controller
  /// runs the trials on the first seed, then the best trial of each configuration on all seeds.
  struct Tune {
    std::int64_t trials = 0;
    std::string metric;              ///< its last recorded value decides
    Goal goal = Goal::Max;
    std::vector<std::string> drawn;  ///< swept-variable keys the trials draw ("optimizer.lr")
  };
  std::optional<Tune> tune;
  /// "file:line: " of the constructor call that made each component, by the component's
  /// resolved spec as JSON text (ComponentSpec::to_json().dump()): where to point an error found
  /// after planning (a model that does not fit its dataset). See location_of().
  std::map<std::string, std::string> component_locations;
  /// "file:line: " of the experiment { ... } call.
  std::string location;

  /// Where `spec` was written: its constructor's location, else the experiment call's.
  std::string location_of(const ComponentSpec& spec) const;
};

/// Bounds on what an experiment file may consume while it runs.
struct LoadOptions {
  std::int64_t instruction_limit = 100'000'000;  ///< Lua VM instructions for the whole file
  std::size_t memory_limit = 64 << 20;           ///< bytes the Lua state may hold at once
  /// "KEY=VALUE" changes to the experiment after the file ran (laconic run --set; lua/overrides.hpp).
  std::vector<std::string> overrides{};
};

/// Runs the experiment file in a sandbox and expands its sweeps. Any problem is a
/// laconic::ConfigError whose message starts with "file:line: " where a line is known
/// (and "file: " otherwise).
ExperimentPlan load_experiment(const std::string& path, const Catalog& catalog, const LoadOptions& options = {});

/// The plan, and the file's functions ready to be called (what a worker needs): the Lua state
/// stays open inside `callbacks`, which must not outlive `catalog`.
struct LoadedExperiment {
  ExperimentPlan plan;
  std::unique_ptr<RunCallbacks> callbacks;
};
LoadedExperiment load_experiment_with_callbacks(const std::string& path, const Catalog& catalog,
                                                const LoadOptions& options = {});

}  // namespace laconic::lua
