#pragma once
#include <string>
#include <vector>

#include "lua/experiment.hpp"

namespace laconic::cli {

/// `laconic list [KIND]`: every registered component with its description and fields.
int list_command(const std::string& kind);

/// `laconic list --markdown`: every kind's components as Markdown tables (the generated
/// reference section of docs/dsl.md).
int list_markdown_command();

/// `laconic check FILE [--only TEXT]`: loads the experiment and lists the runs it would
/// execute (those whose name contains TEXT), training none.
int check_command(const std::string& file, const std::string& only = "");

/// Indices of the runs of `plan` whose name contains `only` (all when empty); ConfigError when
/// none does.
std::vector<std::size_t> select_runs(const lua::ExperimentPlan& plan, const std::string& file,
                                     const std::string& only);

}  // namespace laconic::cli
