#pragma once
// The fields of `experiment { ... }`: RunConfig's own (engine/core/run_config.hpp, where each is
// declared once) and the file's four that shape the plan rather than a run (name, seeds,
// repeats, runs_per_seed). One table, read by the parser, the sweep expansion, --set and the docs.
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/run_config.hpp"

namespace laconic::lua {

/// What an experiment field holds.
enum class ExperimentFieldType { Component, Int, Number, String, IntList, Choice };

/// One field of the experiment table.
struct ExperimentField {
  std::string name;
  ExperimentFieldType type;
  std::string doc;  ///< one line, with units
  /// The RunConfig field it sets (kind, default, range, member); null for the plan's own fields.
  const RunField* run = nullptr;
};

/// Every experiment field, sorted by name (the order sweeps expand in).
const std::vector<ExperimentField>& experiment_fields();

/// The field called `name`, or nullptr.
const ExperimentField* find_experiment_field(std::string_view name);

/// "batch_size, compressor, data, ...": for "unknown field" messages.
std::string experiment_field_names();

/// "unknown experiment field 'epoch'; did you mean 'epochs'? (known: batch_size, ...)".
std::string unknown_experiment_field(const std::string& name);

}  // namespace laconic::lua
