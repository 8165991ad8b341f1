#pragma once
// Expanding an experiment into its runs: the cross product of the swept fields, times seeds.
#include <cstddef>
#include <vector>

#include "engine/core/catalog.hpp"
#include "engine/core/run_config.hpp"
#include "lua/context.hpp"

namespace laconic::lua {

/// The most runs one experiment's sweeps may make (before where(run) filters them).
inline constexpr std::size_t kMaxRuns = 100000;

/// One RunConfig per combination of swept alternatives (fields in name order, the first field
/// varying slowest) and seed (innermost). Omitted component fields take their default from
/// the catalog. Errors are ConfigErrors prefixed with the experiment call's location.
std::vector<RunConfig> expand_sweeps(const ExperimentDraft& draft, const Catalog& catalog);

/// How a value appears in a run name: strings bare (ring), numbers shortest (0.01).
std::string format_name_value(const Value& value);

}  // namespace laconic::lua
