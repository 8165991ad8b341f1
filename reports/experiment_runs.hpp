#pragma once
// The runs of one experiment as a report sees them: every run name's latest run, and the latest
// FINISHED run of each name with its configuration and swept variables parsed from JSON.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/units.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"

namespace laconic::reports {

/// A FINISHED run with what the report groups it by.
struct ReportRun {
  std::int64_t id = 0;
  std::string name;
  std::int64_t seed = 0;
  std::int64_t repetition = 0;
  nlohmann::json swept = nlohmann::json::object();   ///< runs.swept
  nlohmann::json config = nlohmann::json::object();  ///< runs.config (RunConfig::to_json)
  std::int64_t workers = 1;                          ///< training ranks; ranks >= workers are parameter servers
  std::string model;                                 ///< config.model.name
  std::string compressor;                            ///< config.compressor.name
  /// Its compressor is the one its experiment judges the others against: config.baseline when
  /// the experiment named one (resolved as config.compressor is: the same JSON), else the field's
  /// default (RunConfig::baseline: none, whatever its scope); and, where the experiment sweeps
  /// the schedule, its schedule is the default one (synchronous).
  bool is_baseline = false;
  bool baseline_named = false;  ///< the configuration records a baseline (baseline = ... in the file)
  /// Its optimizer brings its own codec (DeMo): its file's compressor is none() but its resolved
  /// one is not full precision (collect_run_data sets it from the run fact). Never the baseline.
  bool optimizer_compresses = false;
  std::string network;                               ///< "1Gbit, 50us": the link projected times are computed for
  /// The link the run was projected onto as a LinkSpec (bandwidth, latency, overhead, host
  /// bandwidth), for projections onto other hardware: its resolved one (collect_run_data sets it
  /// from the run fact, or from recorded_link for runs recorded before it); unset for a network
  /// that is not one link.
  std::optional<LinkSpec> link;
  std::int64_t batch_size = 0;  ///< config.batch_size: examples per worker and step
  /// The link's bandwidth (bit/s) when the run trained on it emulated (link { emulate = true }),
  /// so that its times are measurements on that link; NaN otherwise.
  double emulated_bits_per_second = std::numeric_limits<double>::quiet_NaN();
  std::string tune;  ///< swept "tune": "trial", "best", or "" when not tuned
  /// "experiment=NAME" when a report compares several experiments (its rows keep them apart);
  /// "" otherwise.
  std::string experiment_part;
};

struct ExperimentRuns {
  std::vector<storage::ExperimentRow> versions;  ///< experiments rows of this name (file versions)
  std::size_t recorded = 0;                      ///< every run recorded, retries included
  std::vector<storage::RunRow> latest;           ///< latest run of each name, in plan order
  std::vector<ReportRun> finished;               ///< latest FINISHED run of each name, in plan order
};

/// The link of a run recorded before the resolved fact, read back once from its recorded
/// network's fields, and its bandwidth when it was emulated (NaN otherwise).
struct RecordedLink {
  std::optional<LinkSpec> link;  ///< unset for a network without a bandwidth or with a field this laconic cannot read
  double emulated_bits_per_second = std::numeric_limits<double>::quiet_NaN();
};
RecordedLink recorded_link(const nlohmann::json& config);

/// One run as the reports read it: its row and its configuration's JSON text (whatever its
/// status). ConfigError when the JSON does not parse.
ReportRun parse_run(const storage::RunRow& row, const std::string& config_text);

/// Loads the runs of `experiment`. ConfigError if it has none (the message lists the
/// experiments that exist) or a run's JSON does not parse.
ExperimentRuns load_experiment_runs(storage::Database& db, const std::string& experiment);

/// The runs of several experiments, one after another, each run marked with its experiment
/// (ReportRun::experiment_part) when there are two or more.
ExperimentRuns load_experiment_runs(storage::Database& db, const std::vector<std::string>& experiments);

/// A swept value as the run name writes it: strings bare, numbers as JSON prints them, a nested
/// component as name{field=value,...}.
std::string value_text(const nlohmann::json& value);

}  // namespace laconic::reports
