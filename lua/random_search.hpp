#pragma once
// Random search (docs/dsl.md, "Random search"): `uniform(a, b)`, `log_uniform(a, b)`,
// `int(a, b)` and `choice { ... }` stand where a value goes, and `random = { n = N, seed = S }`
// in the experiment draws N joint samples of them. The samples become one paired axis of the
// plan, crossed with the grid sweeps and the seeds.
#include <functional>
#include <string>

#include "lua/context.hpp"
#include "lua/state.hpp"

namespace laconic::lua {

/// Defines the global functions uniform, log_uniform, int and choice, and their metatable.
void install_distributions(SandboxedState& state, LoadContext& context);

/// "log_uniform(0.001, 0.1)": a distribution as written.
std::string describe_distribution(const Distribution& distribution);

/// Draws `draft.samples` distinct joint samples (deterministic for `draft.sample_seed`) and
/// fills the alternatives of every field given a distribution or a random template, as one
/// paired group. ConfigError when distributions are used without `random = { n = ... }`, or
/// `random` without distributions, or when fewer distinct samples exist than asked for.
/// `check` validates (and normalizes: ints for Number fields) each drawn alternative of the
/// named experiment field.
void draw_random_samples(LoadContext& context, ExperimentDraft& draft,
                         const std::function<Choice(const std::string& field, const Choice& choice)>& check);

/// The group name the random samples' axes share (no `sweep { group = ... }` can take it).
inline constexpr const char* kRandomGroup = "(random search)";

}  // namespace laconic::lua
