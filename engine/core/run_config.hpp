#pragma once
// The fully resolved configuration of one run: what the controller records and what every worker
// of the run trains with. Its fields are declared once, in RunConfig::fields(): the recorded
// configuration (to_json / from_json), the experiment file's fields (lua/fields.hpp), `--set`
// and docs/dsl.md all read that one list.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/component.hpp"

namespace laconic {

/// What the workers compress and exchange (the experiment field `exchange`).
enum class Exchange {
  Gradient,  ///< the gradient: the optimizer's momentum and learning rate act on the average
  Update,    ///< each worker applies them and sends lr x its direction; the average is applied as it is
};

/// "gradient" or "update", as the experiment file and the recorded configuration write it.
const char* exchange_name(Exchange exchange);

/// The batches of a step with workers away (churn; the experiment field `churn_batch`).
enum class ChurnBatch {
  PerWorker,  ///< each worker present its own batch: the global batch shrinks with the workers away
  Global,     ///< the absent workers' examples of the step shared among those present: the global batch stays
};

/// "per_worker" or "global", as the experiment file and the recorded configuration write it.
const char* churn_batch_name(ChurnBatch rule);

/// "true" or "false", as the experiment file's `elastic` is recorded.
const char* elastic_name(bool elastic);

struct RunField;

struct RunConfig {
  std::string experiment;  ///< experiment name
  std::string name;        ///< run name built from the swept variables ("compressor=topk,seed=1")
  // Each component field's default: what an experiment that omits it gets, and what a recorded
  // configuration that lacks it is read as (RunField::default_component comes from here).
  ComponentSpec dataset{"dataset", "fashion_mnist", {}};
  ComponentSpec model{"model", "lenet5", {}};
  ComponentSpec optimizer{"optimizer", "sgd", {}};
  ComponentSpec topology{"topology", "allreduce", {}};
  ComponentSpec schedule{"schedule", "synchronous", {}};
  ComponentSpec compressor{"compressor", "none", {}};
  /// The network communication time is projected onto (`link { bandwidth, latency }`).
  ComponentSpec network{"network", "link", {}};
  /// The learning-rate schedule applied to the optimizer's rate.
  ComponentSpec lr_schedule{"lr_schedule", "constant", {}};
  /// When a run stops before its last epoch (early_stopping).
  ComponentSpec stopping{"stopping", "never", {}};
  /// Where its ranks live: a process each (processes) or threads of one process (threads).
  ComponentSpec placement{"placement", "processes", {}};
  /// What reports project the runs onto besides this machine (measured, or a hardware profile).
  ComponentSpec hardware{"hardware", "measured", {}};
  /// Workers that leave and join during the run (calm, or a script of changes; engine/train/churn.hpp).
  ComponentSpec churn{"churn", "calm", {}};
  /// Where it trains (cpu, cuda, auto; engine/train/device.hpp).
  ComponentSpec device{"device", "cpu", {}};
  /// The compressor reports judge every other one against (`baseline = fp16()`); by default
  /// the compressor field's own default, a full-precision exchange.
  ComponentSpec baseline{"compressor", "none", {}};
  std::int64_t batch_size = 64;  ///< examples per worker per step
  std::int64_t epochs = 1;       ///< passes over each worker's shard
  std::int64_t workers = 2;      ///< training ranks (a topology's servers are ranks beyond them)
  std::int64_t seed = 1;         ///< seeds weights, shuffling and stochastic compressors
  std::int64_t repetition = 0;   ///< index among runs with the same swept values
  std::int64_t max_steps = 0;    ///< stop each epoch after this many steps; 0 = whole shard
  std::int64_t eval_limit = 0;   ///< test examples evaluated per epoch; 0 = whole test split
  /// Steps between evaluations on the test split besides every epoch's end; 0 = epoch ends only.
  std::int64_t eval_every = 0;
  double timeout = 60;  ///< seconds any collective or rendezvous may wait
  /// A training loss above this many times the first step's loss (or NaN / inf at any time)
  /// stops the run as DIVERGED; 0 = only NaN / inf.
  double divergence_factor = 100;
  /// The global L2 norm of the gradient the optimizer steps on is clipped to this (PyTorch's
  /// clip_grad_norm_ after DDP's average); 0 = no clipping.
  double clip_norm = 0;
  Exchange exchange = Exchange::Gradient;
  ChurnBatch churn_batch = ChurnBatch::PerWorker;
  /// A worker process that dies is dropped at once and relaunched, the run going on without it
  /// meanwhile (the experiment field `elastic`; docs/topologies.md, "Elastic runs").
  bool elastic = false;
  /// The variables the sweep set for this run (name -> value), kept apart from the rest.
  std::map<std::string, Value> swept;

  /// Every field but experiment, name and swept, declared once (sorted by the experiment file's
  /// name for it).
  static const std::vector<RunField>& fields();

  /// The full resolved configuration (the `config` column of `runs`).
  nlohmann::json to_json() const;
  /// The swept variables alone (the `swept` column of `runs`).
  nlohmann::json swept_json() const;
  static RunConfig from_json(const nlohmann::json& json);
  /// configuration_key(experiment, swept_json()).
  std::string configuration_key() const;
  /// Its compressor is the one its experiment judges the others against: `baseline` (with its
  /// fields) when the file names one, else the field's default's name (none, whatever its scope).
  /// reports::parse_run reads the same rule off a recorded configuration.
  bool is_baseline() const;
};

/// The swept variable that draws a run's sample (its weights, its shuffling, its stochastic
/// compressors) without changing what is compared: runs that differ in it alone repeat one
/// configuration.
inline constexpr const char* kSeedVariable = "seed";

/// "A configuration is a run less its seed", written once: the experiment and the swept
/// variables but kSeedVariable, as one text. Runs with equal keys are seeds of one configuration
/// (laconic runs --group-by configuration, laconic best, the compare page's bands).
std::string configuration_key(const std::string& experiment, nlohmann::json swept);

/// One field of a run's configuration: what the experiment file calls it, what the recorded
/// configuration calls it, its type, meaning and range, and where it lands in a RunConfig.
struct RunField {
  enum class Type { Component, Int, Number, Choice };

  std::string name;  ///< in the experiment file ("data")
  std::string key;   ///< in the recorded configuration, runs.config ("dataset")
  Type type;
  std::string doc{};  ///< one line, with units
  /// Set by the experiment file's own field of that name; false for what the plan sets
  /// (seed from `seeds`, repetition from `runs_per_seed`).
  bool in_file = true;
  std::string kind{};               ///< Component: the component kind
  std::string default_component{};  ///< Component: what an experiment that omits the field gets
  std::int64_t minimum = 0;       ///< Int: the smallest valid value
  bool zero_allowed = false;      ///< Number: 0 is valid too (else > 0)
  /// Choice: the words allowed, the default first. A word other than the default is named in
  /// the run's name even when not swept ("...,exchange=update,seed=1").
  std::vector<std::string> choices{};
  /// Written into the recorded configuration only when it differs from its default, so that
  /// configurations recorded before the field existed compare equal.
  bool recorded_at_default = true;
  /// A recorded configuration may lack it (it was recorded before the field existed): read as
  /// the default.
  bool optional_in_record = false;
  /// Training reads it. A field only reports read (baseline) keeps RunConfig's default when the
  /// file omits it, not looked up in the catalog, so a catalog without it still loads files.
  bool read_by_training = true;

  ComponentSpec RunConfig::*component = nullptr;  ///< Component
  std::int64_t RunConfig::*integer = nullptr;     ///< Int
  double RunConfig::*number = nullptr;            ///< Number
  /// Choice: the word the run holds, and setting it from a word of `choices`.
  std::function<std::string(const RunConfig&)> get_choice{};
  std::function<void(RunConfig&, const std::string&)> set_choice{};

  /// The field's value in `run`, as the recorded configuration writes it.
  nlohmann::json value_json(const RunConfig& run) const;
  /// Sets the field of `run` from its recorded JSON (nlohmann's exceptions for a wrong type).
  void set_from_json(RunConfig& run, const nlohmann::json& json) const;
  /// True when `run` holds the default (a RunConfig{}'s value).
  bool at_default(const RunConfig& run) const;
};

}  // namespace laconic
