#include "lua/fields.hpp"

#include "engine/core/error.hpp"
#include "engine/core/suggest.hpp"

namespace laconic::lua {

const std::vector<ExperimentField>& experiment_fields() {
  using T = ExperimentFieldType;
  // Sorted by name. Scalar defaults live in RunConfig; the docs (docs/dsl.md) repeat them.
  static const std::vector<ExperimentField> kFields = {
      {.name = "batch_size",
       .type = T::Int,
       .minimum = 1,
       .doc = "examples per worker per step",
       .integer = &RunConfig::batch_size},
      {.name = "compressor",
       .type = T::Component,
       .kind = "compressor",
       .default_component = "none",
       .doc = "gradient compressor",
       .component = &RunConfig::compressor},
      {.name = "data",
       .type = T::Component,
       .kind = "dataset",
       .default_component = "fashion_mnist",
       .doc = "dataset",
       .component = &RunConfig::dataset},
      {.name = "divergence_factor",
       .type = T::Number,
       .zero_allowed = true,
       .doc = "a training loss above this many times the first step's (or NaN / inf) ends the run "
              "DIVERGED; 0 = only NaN / inf (>= 0)",
       .number = &RunConfig::divergence_factor},
      {.name = "epochs",
       .type = T::Int,
       .minimum = 1,
       .doc = "passes over each worker's shard",
       .integer = &RunConfig::epochs},
      {.name = "eval_every",
       .type = T::Int,
       .minimum = 0,
       .doc = "steps between extra evaluations on the test split (worker 0), besides every epoch's "
              "end; 0 = epoch ends only",
       .integer = &RunConfig::eval_every},
      {.name = "eval_limit",
       .type = T::Int,
       .minimum = 0,
       .doc = "test examples evaluated per epoch; 0 = whole test split",
       .integer = &RunConfig::eval_limit},
      {.name = "exchange",
       .type = T::Choice,
       .doc = "what workers compress and exchange: \"gradient\" (momentum and learning rate applied to the "
              "average) or \"update\" (each worker applies them first and sends lr x its step, error feedback on "
              "the update; docs/compressors.md)",
       .choices = {"gradient", "update"},
       .text = &RunConfig::exchange},
      {.name = "lr_schedule",
       .type = T::Component,
       .kind = "lr_schedule",
       .default_component = "constant",
       .doc = "learning-rate schedule",
       .component = &RunConfig::lr_schedule},
      {.name = "max_steps",
       .type = T::Int,
       .minimum = 0,
       .doc = "steps per epoch; 0 = whole shard",
       .integer = &RunConfig::max_steps},
      {.name = "model",
       .type = T::Component,
       .kind = "model",
       .default_component = "lenet5",
       .doc = "model",
       .component = &RunConfig::model},
      {.name = "name", .type = T::String, .doc = "experiment name (required)"},
      {.name = "network",
       .type = T::Component,
       .kind = "network",
       .default_component = "link",
       .doc = "the link communication time is projected onto",
       .component = &RunConfig::network},
      {.name = "optimizer",
       .type = T::Component,
       .kind = "optimizer",
       .default_component = "sgd",
       .doc = "optimizer",
       .component = &RunConfig::optimizer},
      {.name = "repeats",
       .type = T::Int,
       .minimum = 1,
       .doc = "runs per combination, with seeds 1..repeats (instead of seeds; `repeat` is a Lua keyword)"},
      {.name = "runs_per_seed",
       .type = T::Int,
       .minimum = 1,
       .doc = "runs of every combination and seed: the same seed trained again, to measure the noise in its "
              "times (laconic run --repeat N overrides it; reports group them)"},
      {.name = "schedule",
       .type = T::Component,
       .kind = "schedule",
       .default_component = "synchronous",
       .doc = "when workers exchange updates",
       .component = &RunConfig::schedule},
      {.name = "seeds", .type = T::IntList, .doc = "one run per seed of every combination"},
      {.name = "stopping",
       .type = T::Component,
       .kind = "stopping",
       .default_component = "never",
       .doc = "when a run stops early",
       .component = &RunConfig::stopping},
      {.name = "timeout",
       .type = T::Number,
       .doc = "seconds any collective or rendezvous may wait (> 0)",
       .number = &RunConfig::timeout},
      {.name = "topology",
       .type = T::Component,
       .kind = "topology",
       .default_component = "allreduce",
       .doc = "how an update is exchanged",
       .component = &RunConfig::topology},
      {.name = "workers", .type = T::Int, .minimum = 1, .doc = "worker processes", .integer = &RunConfig::workers},
  };
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
