#pragma once
// Which runs of an experiment a sweep (or `laconic check`) takes, and the check that each fits
// before anything trains.
#include <cstddef>
#include <string>
#include <vector>

#include "lua/experiment.hpp"

namespace laconic::engine {
class EngineCatalog;
}

namespace laconic::controller {

/// Indices of the runs of `plan` whose name contains `only` (all when empty); ConfigError when
/// none does.
std::vector<std::size_t> select_runs(const lua::ExperimentPlan& plan, const std::string& file, const std::string& only);

/// ConfigError, naming the run, unless each selected run's model fits its dataset (classes,
/// bptt, example shape); each distinct (dataset, model) pair is checked once.
void check_runs(const engine::EngineCatalog& catalog, const lua::ExperimentPlan& plan,
                const std::vector<std::size_t>& selected);

}  // namespace laconic::controller
