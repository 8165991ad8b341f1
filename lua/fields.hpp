#pragma once
// The fields of `experiment { ... }`: their types, bounds, defaults and where each lands in a
// RunConfig. One table, read by the parser, the sweep expansion and (later) the docs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/run_config.hpp"

namespace laconic::lua {

/// What an experiment field holds.
enum class ExperimentFieldType { Component, Int, Number, String, IntList, Choice };

/// One field of the experiment table.
struct ExperimentField {
  const char* name;
  ExperimentFieldType type;
  const char* kind = "";               ///< component kind, for Component fields
  const char* default_component = "";  ///< used when the file omits the field and the catalog has it
  std::int64_t minimum = 0;            ///< Int fields: smallest valid value
  bool zero_allowed = false;           ///< Number fields: 0 is valid too (else > 0)
  const char* doc = "";                ///< one line, with units
  /// Choice fields: the words allowed, the first the default. A value other than the default
  /// is named in the run's name even when not swept ("...,exchange=update,seed=1").
  std::vector<const char*> choices = {};
  ComponentSpec RunConfig::*component = nullptr;
  std::int64_t RunConfig::*integer = nullptr;
  double RunConfig::*number = nullptr;
  std::string RunConfig::*text = nullptr;
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
