#include "engine/core/run_config.hpp"

#include "engine/core/error.hpp"

namespace laconic {

nlohmann::json RunConfig::to_json() const {
  nlohmann::json out;
  out["experiment"] = experiment;
  out["name"] = name;
  out["dataset"] = dataset.to_json();
  out["model"] = model.to_json();
  out["optimizer"] = optimizer.to_json();
  out["topology"] = topology.to_json();
  out["schedule"] = schedule.to_json();
  out["compressor"] = compressor.to_json();
  out["network"] = network.to_json();
  out["lr_schedule"] = lr_schedule.to_json();
  out["stopping"] = stopping.to_json();
  out["batch_size"] = batch_size;
  out["epochs"] = epochs;
  out["workers"] = workers;
  out["seed"] = seed;
  out["repetition"] = repetition;
  out["max_steps"] = max_steps;
  out["eval_limit"] = eval_limit;
  if (eval_every > 0) out["eval_every"] = eval_every;
  out["timeout"] = timeout;
  out["divergence_factor"] = divergence_factor;
  if (exchange != "gradient") out["exchange"] = exchange;
  out["swept"] = swept_json();
  return out;
}

nlohmann::json RunConfig::swept_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : swept) out[key] = value_to_json(value);
  return out;
}

RunConfig RunConfig::from_json(const nlohmann::json& json) {
  try {
    RunConfig c;
    c.experiment = json.at("experiment").get<std::string>();
    c.name = json.at("name").get<std::string>();
    c.dataset = ComponentSpec::from_json("dataset", json.at("dataset"));
    c.model = ComponentSpec::from_json("model", json.at("model"));
    c.optimizer = ComponentSpec::from_json("optimizer", json.at("optimizer"));
    c.topology = ComponentSpec::from_json("topology", json.at("topology"));
    c.schedule = ComponentSpec::from_json("schedule", json.at("schedule"));
    c.compressor = ComponentSpec::from_json("compressor", json.at("compressor"));
    // Runs recorded before the network model have none: the default link.
    if (json.contains("network")) c.network = ComponentSpec::from_json("network", json["network"]);
    if (json.contains("stopping")) c.stopping = ComponentSpec::from_json("stopping", json["stopping"]);
    if (json.contains("lr_schedule")) c.lr_schedule = ComponentSpec::from_json("lr_schedule", json["lr_schedule"]);
    c.batch_size = json.at("batch_size").get<std::int64_t>();
    c.epochs = json.at("epochs").get<std::int64_t>();
    c.workers = json.at("workers").get<std::int64_t>();
    c.seed = json.at("seed").get<std::int64_t>();
    c.repetition = json.at("repetition").get<std::int64_t>();
    c.max_steps = json.at("max_steps").get<std::int64_t>();
    c.eval_limit = json.at("eval_limit").get<std::int64_t>();
    if (json.contains("eval_every")) c.eval_every = json["eval_every"].get<std::int64_t>();
    c.timeout = json.at("timeout").get<double>();
    // Runs recorded before divergence detection have none: the default.
    if (json.contains("divergence_factor")) c.divergence_factor = json["divergence_factor"].get<double>();
    if (json.contains("exchange")) c.exchange = json["exchange"].get<std::string>();
    for (const auto& [key, value] : json.at("swept").items()) c.swept[key] = value_from_json(value);
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("malformed run configuration: ") + e.what());
  }
}

}  // namespace laconic
