#include "controller/run_selection.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "engine/catalog.hpp"
#include "engine/core/error.hpp"

namespace laconic::controller {

std::vector<std::size_t> select_runs(const lua::ExperimentPlan& plan, const std::string& file,
                                     const std::string& only) {
  std::vector<std::size_t> selected;
  for (std::size_t i = 0; i < plan.runs.size(); ++i)
    if (only.empty() || plan.runs[i].name.find(only) != std::string::npos) selected.push_back(i);
  if (selected.empty()) throw ConfigError(str_cat("no run of '", file, "' has a name containing '", only, "'"));
  return selected;
}

void check_runs(const engine::EngineCatalog& catalog, const lua::ExperimentPlan& plan,
                const std::vector<std::size_t>& selected) {
  std::set<std::string> checked;
  for (std::size_t i : selected) {
    const RunConfig& run = plan.runs[i];
    // What check_run looks at: runs that differ only in their seed or repetition are checked once.
    nlohmann::json checked_part = run.to_json();
    for (const char* key : {"name", "seed", "repetition", "swept"}) checked_part.erase(key);
    if (!checked.insert(checked_part.dump()).second) continue;
    try {
      catalog.check_run(run);
    } catch (Error& e) {
      // "exp.lua:7: run 1 (...): ...": the model's constructor is where the fix goes.
      std::string location = plan.location_of(run.model);
      while (!location.empty() && (location.back() == ' ' || location.back() == ':')) location.pop_back();
      e.add_context(str_cat(location.empty() ? "" : location + ": ", "run ", i + 1, " (", run.name, ")"));
      throw;
    }
  }
}

}  // namespace laconic::controller
