#pragma once
// laconic advise's probes (docs/advise.md): what they are asked (AdviseOptions), their experiment's
// name, placement, --set list and order, and the budget they train within: its watch and, once
// the first probe has finished, its forecast. cli/advise_command.cpp trains them through the
// controller and prints the advice.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/resolved_run.hpp"
#include "engine/core/run_config.hpp"

namespace laconic::advise {

/// What `laconic advise` is asked (its command line, cli/engine_command_line.cpp).
struct AdviseOptions {
  std::string file;
  std::int64_t workers = 0;
  std::string link;  ///< "1Gbit", "100Mbit,1ms" (engine/core/units.hpp, parse_link)
  /// A hardware profile (docs/hardware.md) the steps are projected onto; "": the experiment's
  /// own (`hardware = profile { ... }`), else the steps as probed here.
  std::string hardware;
  std::string budget = "15min";  ///< probes stop when it is spent; those not begun are listed
  std::optional<double> target;  ///< the metric's target; default: the baseline's, less the tolerance
  /// Where the probes' ranks live: "threads", "processes", or "auto": processes where the host
  /// has a core per worker (then the probes are timed as full runs are), else threads.
  std::string placement = "auto";
  /// Probe runs per candidate (seeds 1..N, trained seed by seed): with two or more each time to
  /// the target has its interval over seeds, and the host's noise is averaged.
  std::int64_t seeds = 3;
  std::int64_t evaluations = 8;        ///< evaluations over each probe: its learning curve
  std::vector<std::string> overrides;  ///< --set KEY=VALUE, before advise's own
  /// --check FULL: no probes; the advice given from those recorded set against the finished
  /// runs of the experiment FULL (the same candidates, trained in full).
  std::string check;
  std::string check_json;  ///< --json FILE with --check: the comparison as JSON (bench/advise_regret.py)
  std::string db = "laconic.db";
  bool quiet = false;
  std::string executable;  ///< this binary, for the probes' exec'd workers
};

/// Seconds of "15min", "6m", "1h", "600s", "0.5h" (parse_duration).
double parse_budget(const std::string& text);

/// What advise says once the first probe it trains has finished (`finished` of `probes` now,
/// `finished_before` when it began, `elapsed` seconds in): "" when the rest fits in `budget` at
/// that pace, else how long they would take and what would fit.
std::string budget_forecast(std::size_t probes, std::size_t finished, std::size_t finished_before, double elapsed,
                            double budget, const std::string& budget_text);

/// The probes' experiment name: "NAME-advise-wN-" and the link with every character other than
/// letters, digits, '.' and '-' turned into '-' ("quickstart-advise-w16-100Mbit-1ms"), and
/// "-processes" for probes placed as processes.
std::string advise_experiment_name(const std::string& experiment, std::int64_t workers, const std::string& link,
                                   RankPlacement placement);

/// The probes' placement for `requested` ("auto", "threads", "processes") with `workers` on a
/// host of `cores`; ConfigError for another word.
RankPlacement probe_placement(const std::string& requested, std::int64_t workers, int cores);

/// The --set list that turns the experiment's runs into advise's probes placed as `placement`.
/// `between_islands`: the experiment's network is a cluster of islands, and --link sets the link
/// between them (network.between.*), the one inside staying the file's.
std::vector<std::string> probe_overrides(const AdviseOptions& args, const std::string& name, RankPlacement placement,
                                         bool between_islands = false);

/// The order advise trains its probes in (controller::SweepOptions::train_order): seed by seed, every candidate's
/// first probe before any second one (the host's drift then lands on every candidate alike), and
/// in each round the baseline's first (as the reports decide it from the run's configuration),
/// since early dropping measures the others against it.
std::int64_t probe_order(const RunConfig& probe);

/// Says once, as soon as the first probe this advise trains has finished, when the probes left
/// would not fit in the budget, and what would (budget_forecast): the probes' pace measured, not
/// guessed.
class BudgetForecast {
 public:
  BudgetForecast(std::string db, std::string experiment, std::size_t probes, double budget, std::string budget_text);

  /// Every 100 ms of the probes, `elapsed` seconds after they started; reads the database every 2 s.
  void tick(double elapsed);

 private:
  std::size_t finished() const;

  std::string db_, experiment_;
  std::size_t probes_;
  double budget_;
  std::string budget_text_;
  std::size_t before_;
  double last_read_ = 0;
  bool said_ = false;
};

/// Sets `out` once `stop` is set or the budget is spent, until destroyed; tells `forecast` (may be
/// null) how long the probes have run.
class BudgetWatch {
 public:
  BudgetWatch(double seconds, const std::atomic<bool>& stop, std::atomic<bool>& out, BudgetForecast* forecast);
  ~BudgetWatch();
  BudgetWatch(const BudgetWatch&) = delete;
  BudgetWatch& operator=(const BudgetWatch&) = delete;
  /// Whether the budget, not `stop`, ended the probes.
  bool spent() const { return spent_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline_;
  std::atomic<bool> done_{false}, spent_{false};
  std::thread thread_;
};

}  // namespace laconic::advise
