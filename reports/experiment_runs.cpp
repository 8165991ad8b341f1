#include "reports/experiment_runs.hpp"

#include <map>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/run_config.hpp"
#include "engine/core/units.hpp"
#include "storage/statement.hpp"

namespace laconic::reports {
namespace {

[[noreturn]] void throw_no_runs(storage::Database& db, const std::string& experiment) {
  std::set<std::string> names;
  for (const auto& e : storage::list_experiments(db)) names.insert(e.name);
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  throw ConfigError(str_cat("experiment '", experiment, "' has no runs in ", db.path(), "; ",
                            names.empty() ? std::string("the database has no experiments") : "experiments: " + known));
}

// The latest row of each name, in the order the names first appear (the plan's order).
template <class Row>
std::vector<Row> latest_per_name(const std::vector<Row>& rows) {
  std::vector<std::string> order;
  std::map<std::string, Row> latest;
  for (const auto& row : rows) {  // ordered by id, so later rows are newer
    if (!latest.count(row.name)) order.push_back(row.name);
    latest[row.name] = row;
  }
  std::vector<Row> out;
  for (const auto& name : order) out.push_back(latest[name]);
  return out;
}

std::string text_field(const nlohmann::json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].is_string()) return object[key].get<std::string>();
  return "";
}

// "1Gbit, 50us"; a cluster's "islands {2, 2}: inside 10Gbit, 10us; between 100Mbit, 1ms"; "" for
// a network without a bandwidth.
std::string network_text(const nlohmann::json& network) {
  const auto link = [](const nlohmann::json& fields) {
    const std::string bandwidth = text_field(fields, "bandwidth"), latency = text_field(fields, "latency");
    return bandwidth.empty() ? bandwidth : bandwidth + (latency.empty() ? "" : ", " + latency);
  };
  if (text_field(network, "name") != "cluster") return link(network);
  std::string islands;
  if (network.contains("islands") && network["islands"].is_array())
    for (const auto& n : network["islands"]) islands += (islands.empty() ? "" : ", ") + n.dump();
  return str_cat("islands {", islands, "}: inside ", link(network.value("inside", nlohmann::json::object())),
                 "; between ", link(network.value("between", nlohmann::json::object())));
}

// The link of a recorded network's fields; unset for a network without a bandwidth or with a
// field this laconic cannot read.
std::optional<LinkSpec> link_of(const nlohmann::json& network) {
  if (text_field(network, "bandwidth").empty()) return std::nullopt;
  try {
    LinkSpec link = parse_link(text_field(network, "bandwidth"));
    if (const std::string latency = text_field(network, "latency"); !latency.empty())
      link.latency_seconds = parse_duration("network.latency", latency);
    if (const std::string overhead = text_field(network, "overhead"); !overhead.empty())
      link.overhead_seconds = parse_duration("network.overhead", overhead);
    const std::string host = text_field(network, "host_bandwidth");
    if (!host.empty()) link.host_bits_per_second = parse_bandwidth("network.host_bandwidth", host);
    if (network.contains("payload_fraction") && network["payload_fraction"].is_number())
      link.payload_fraction = network["payload_fraction"].get<double>();
    return link;
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}


}  // namespace

ReportRun parse_run(const storage::RunRow& row, const std::string& config_text) {
  ReportRun run;
  run.id = row.id;
  run.name = row.name;
  run.seed = row.seed;
  run.repetition = row.repetition;
  try {
    run.swept = nlohmann::json::parse(row.swept.empty() ? "{}" : row.swept);
    run.config = nlohmann::json::parse(config_text.empty() ? "{}" : config_text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(str_cat("run ", row.id, " ('", row.name, "') has malformed JSON: ", e.what()));
  }
  if (run.config.contains("workers") && run.config["workers"].is_number_integer())
    run.workers = run.config["workers"].get<std::int64_t>();
  run.model = text_field(run.config.value("model", nlohmann::json::object()), "name");
  const nlohmann::json compressor = run.config.value("compressor", nlohmann::json::object());
  run.compressor = text_field(compressor, "name");
  run.baseline_named = run.config.contains("baseline");
  run.is_baseline = run.baseline_named ? compressor == run.config["baseline"] : run.compressor == RunConfig{}.baseline.name;
  // Where the file sweeps the schedule, a schedule is part of the method (configurations.hpp):
  // the baseline is the baseline compressor under the default schedule, every step exchanged.
  if (run.swept.contains("schedule") && run.swept["schedule"] != RunConfig{}.schedule.name) run.is_baseline = false;
  run.network = network_text(run.config.value("network", nlohmann::json::object()));
  if (run.config.contains("batch_size") && run.config["batch_size"].is_number_integer())
    run.batch_size = run.config["batch_size"].get<std::int64_t>();
  run.tune = text_field(run.swept, "tune");
  return run;
}

RecordedLink recorded_link(const nlohmann::json& config) {
  RecordedLink out;
  const auto network = config.is_object() ? config.value("network", nlohmann::json::object()) : nlohmann::json::object();
  out.link = link_of(network);
  const bool emulated = network.is_object() && network.contains("emulate") && network["emulate"].is_boolean() &&
                        network["emulate"].get<bool>();
  if (out.link && emulated) out.emulated_bits_per_second = out.link->bits_per_second;
  return out;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_object() || !value.contains("name") || !value["name"].is_string()) return value.dump();
  // A nested component as the run names write it: sgd{lr=0.7,momentum=0.9}.
  std::string fields;
  for (const auto& [key, field] : value.items())
    if (key != "name") fields += (fields.empty() ? "" : ",") + key + "=" + value_text(field);
  return value["name"].get<std::string>() + "{" + fields + "}";
}

ExperimentRuns load_experiment_runs(storage::Database& db, const std::string& experiment) {
  ExperimentRuns out;
  const auto runs = storage::list_runs(db, {.experiment = experiment, .status = std::nullopt, .newest = std::nullopt});
  if (runs.empty()) throw_no_runs(db, experiment);
  for (const auto& e : storage::list_experiments(db))
    if (e.name == experiment) out.versions.push_back(e);
  out.recorded = runs.size();
  out.latest = latest_per_name(runs);

  std::vector<storage::RunRow> finished;
  for (const auto& run : runs)
    if (run.status == storage::RunStatus::Finished) finished.push_back(run);
  // The configs of the finished runs only: one indexed lookup by primary key each.
  storage::Statement config(db.handle(), "SELECT config FROM runs WHERE id = ?1");
  for (const auto& row : latest_per_name(finished)) {
    config.reset();
    config.bind_int64(1, row.id);
    const std::string text = config.step() ? config.column_text(0) : "";
    out.finished.push_back(parse_run(row, text));
  }
  return out;
}

ExperimentRuns load_experiment_runs(storage::Database& db, const std::vector<std::string>& experiments) {
  if (experiments.size() == 1) return load_experiment_runs(db, experiments.front());
  ExperimentRuns out;
  for (const std::string& experiment : experiments) {
    ExperimentRuns one = load_experiment_runs(db, experiment);
    for (ReportRun& run : one.finished) run.experiment_part = "experiment=" + experiment;
    out.versions.insert(out.versions.end(), one.versions.begin(), one.versions.end());
    out.recorded += one.recorded;
    out.latest.insert(out.latest.end(), one.latest.begin(), one.latest.end());
    out.finished.insert(out.finished.end(), one.finished.begin(), one.finished.end());
  }
  return out;
}

}  // namespace laconic::reports
