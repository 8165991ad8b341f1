#include "lua/fields.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/core/suggest.hpp"

namespace laconic::lua {

namespace {

ExperimentFieldType type_of(const RunField& field) {
  switch (field.type) {
    case RunField::Type::Component:
      return ExperimentFieldType::Component;
    case RunField::Type::Int:
      return ExperimentFieldType::Int;
    case RunField::Type::Number:
      return ExperimentFieldType::Number;
    case RunField::Type::Choice:
      return ExperimentFieldType::Choice;
  }
  return ExperimentFieldType::String;
}

}  // namespace

const std::vector<ExperimentField>& experiment_fields() {
  using T = ExperimentFieldType;
  static const std::vector<ExperimentField> kFields = [] {
    std::vector<ExperimentField> fields = {
        {"name", T::String, "experiment name (required)"},
        {"repeats", T::Int, "runs per combination, with seeds 1..repeats (instead of seeds; `repeat` is a Lua keyword)"},
        {"runs_per_seed", T::Int,
         "runs of every combination and seed: the same seed trained again, to measure the noise in its times "
         "(laconic run --repeat N overrides it; reports group them)"},
        {"seeds", T::IntList, "one run per seed of every combination"},
    };
    for (const RunField& field : RunConfig::fields())
      if (field.in_file) fields.push_back({field.name, type_of(field), field.doc, &field});
    std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return fields;
  }();
  return kFields;
}

const ExperimentField* find_experiment_field(std::string_view name) {
  for (const ExperimentField& field : experiment_fields())
    if (name == field.name) return &field;
  return nullptr;
}

std::string unknown_experiment_field(const std::string& name) {
  std::vector<std::string> names;
  for (const ExperimentField& f : experiment_fields()) names.emplace_back(f.name);
  std::string close = closest_name(name, names);
  // A known field the name extends: "dataset" for data, "optimizers" for optimizer.
  for (const std::string& known : names)
    if (close.empty() && known.size() >= 4 && name.size() > known.size() && name.starts_with(known)) close = known;
  return str_cat("unknown experiment field '", name, "'",
                 close.empty() ? std::string() : "; did you mean '" + close + "'?",
                 " (known: ", experiment_field_names(), ")");
}

std::string experiment_field_names() {
  std::string out;
  for (const ExperimentField& field : experiment_fields()) out += (out.empty() ? "" : ", ") + std::string(field.name);
  return out;
}

}  // namespace laconic::lua
