#pragma once
// The fully resolved configuration of one run: what the controller records and what every worker
// of the run trains with.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/component.hpp"

namespace laconic {

struct RunConfig {
  std::string experiment;  ///< experiment name
  std::string name;        ///< run name built from the swept variables ("compressor=topk,seed=1")
  ComponentSpec dataset, model, optimizer, topology, schedule, compressor;
  /// The network communication time is projected onto (`link { bandwidth, latency }`).
  ComponentSpec network{"network", "link", {}};
  /// The learning-rate schedule applied to the optimizer's rate.
  ComponentSpec lr_schedule{"lr_schedule", "constant", {}};
  /// When a run stops before its last epoch (early_stopping).
  ComponentSpec stopping{"stopping", "never", {}};
  std::int64_t batch_size = 64;  ///< examples per worker per step
  std::int64_t epochs = 1;       ///< passes over each worker's shard
  std::int64_t workers = 2;      ///< worker processes
  std::int64_t seed = 1;         ///< seeds weights, shuffling and stochastic compressors
  std::int64_t repetition = 0;   ///< index among runs with the same swept values
  std::int64_t max_steps = 0;    ///< stop each epoch after this many steps; 0 = whole shard
  std::int64_t eval_limit = 0;   ///< test examples evaluated per epoch; 0 = whole test split
  /// Steps between evaluations on the test split besides every epoch's end; 0 = epoch ends only.
  /// Left out of to_json() when 0, so configurations recorded before it compare equal.
  std::int64_t eval_every = 0;
  double timeout = 60;  ///< seconds any collective or rendezvous may wait
  /// A training loss above this many times the first step's loss (or NaN / inf at any time)
  /// stops the run as DIVERGED; 0 = only NaN / inf.
  double divergence_factor = 100;
  /// What the workers compress and exchange: "gradient" (the optimizer's momentum and learning
  /// rate act on the average) or "update" (each worker applies them and sends lr * direction;
  /// the average is applied as it is). Left out of to_json() when "gradient", so configurations
  /// recorded before it compare equal.
  std::string exchange = "gradient";
  /// The variables the sweep set for this run (name -> value), kept apart from the rest.
  std::map<std::string, Value> swept;

  /// The full resolved configuration (the `config` column of `runs`).
  nlohmann::json to_json() const;
  /// The swept variables alone (the `swept` column of `runs`).
  nlohmann::json swept_json() const;
  static RunConfig from_json(const nlohmann::json& json);
};

}  // namespace laconic
