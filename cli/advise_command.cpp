#include "cli/advise_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "controller/host_load.hpp"
#include "controller/probe_watch.hpp"
#include "controller/run_sweep.hpp"
#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/units.hpp"
#include "engine/train/dataset.hpp"
#include "engine/train/worker.hpp"
#include "lua/experiment.hpp"
#include "reports/advice.hpp"
#include "reports/advice_check.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/format.hpp"
#include "reports/layer_check.hpp"
#include "reports/layer_plan.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"

namespace laconic::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The link's parts as the `link` network's fields, in parse_link's order.
std::vector<std::string> link_overrides(const std::string& link) {
  static const char* const kFields[] = {"bandwidth", "latency", "overhead", "host_bandwidth"};
  std::vector<std::string> out;
  std::size_t from = 0, part = 0;
  while (from <= link.size() && part < 4) {
    const auto comma = link.find(',', from);
    const std::string text = link.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    out.push_back(str_cat("network.", kFields[part++], "=", text));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

// The candidates advised on when the file sweeps no compressor: dense first (the baseline), then
// one of each family, under the file's topology (an allreduce carries the ones whose payloads do
// not sum by an allgather). docs/advise.md lists them.
constexpr const char* kDefaultCandidates =
    "compressor=sweep{none(), fp16(), topk{ratio=0.01, error_feedback=true}, powersgd{rank=2}, qsgd{levels=16}, "
    "ef_signsgd()}";

bool sweeps_compressors(const lua::ExperimentPlan& plan) {
  for (const RunConfig& run : plan.runs)
    if (run.swept.count("compressor") > 0) return true;
  return false;
}

// Says once, as soon as the first probe this advise trains has finished, when the probes left
// would not fit in the budget, and what would: the probes' pace measured, not guessed.
class BudgetForecast {
 public:
  BudgetForecast(std::string db, std::string experiment, std::size_t probes, double budget, std::string budget_text)
      : db_(std::move(db)), experiment_(std::move(experiment)), probes_(probes), budget_(budget),
        budget_text_(std::move(budget_text)), before_(finished()) {}

  /// Every 100 ms of the probes, `elapsed` seconds after they started; reads the database every 2 s.
  void tick(double elapsed) {
    if (said_ || elapsed - last_read_ < 2) return;
    last_read_ = elapsed;
    const std::size_t now = finished();
    if (now <= before_) return;
    said_ = true;
    const std::string warning = budget_forecast(probes_, now, before_, elapsed, budget_, budget_text_);
    if (!warning.empty()) std::cout << "laconic advise: " << warning << std::endl;
  }

 private:
  std::size_t finished() const {
    try {
      if (!std::filesystem::exists(db_)) return 0;
      auto db = storage::Database::open_read_only(db_);
      storage::RunFilter filter;
      filter.experiment = experiment_;
      filter.status = "FINISHED";
      return storage::list_runs(*db, filter).size();
    } catch (const StorageError&) {  // locked or being created: next time
      return 0;
    }
  }

  std::string db_, experiment_;
  std::size_t probes_;
  double budget_;
  std::string budget_text_;
  std::size_t before_;
  double last_read_ = 0;
  bool said_ = false;
};

// Sets `out` once `stop` is set or the budget is spent, until `done`; tells `forecast` how long
// the probes have run.
class BudgetWatch {
 public:
  BudgetWatch(double seconds, const std::atomic<bool>& stop, std::atomic<bool>& out, BudgetForecast* forecast)
      : deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))),
        thread_([this, &stop, &out, forecast, started = Clock::now()] {
          while (!done_) {
            if (stop || Clock::now() >= deadline_) {
              spent_ = !stop;
              out = true;
              return;
            }
            if (forecast != nullptr)
              forecast->tick(std::chrono::duration<double>(Clock::now() - started).count());
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }) {}
  ~BudgetWatch() {
    done_ = true;
    thread_.join();
  }
  bool spent() const { return spent_; }

 private:
  Clock::time_point deadline_;
  std::atomic<bool> done_{false}, spent_{false};
  std::thread thread_;
};

// The steps of a probe: those of the first run (at the advised workers, so on its shard).
std::int64_t probe_steps(const RunConfig& probe, const engine::EngineCatalog& catalog) {
  const auto parts = catalog.build(probe, 0);
  return probe.epochs * train::steps_per_epoch(probe, *parts.dataset);  // max_steps counted there
}

// Each ranked candidate's prediction, as the fact `advice` of each of its runs (what a later
// check against full runs reads).
void record_predictions(const std::string& db_path, const reports::Advice& advice, const AdviseArgs& args) {
  auto db = storage::Database::open(db_path);
  storage::Recorder recorder(*db);
  for (std::size_t i = 0; i < advice.ranked.size(); ++i) {
    const reports::AdviceRow& row = advice.ranked[i];
    const nlohmann::json fact = {
        {"version", 1},
        {"workers", args.workers},
        {"link", advice.link.text},
        {"hardware", advice.hardware != nullptr ? nlohmann::json(advice.hardware->name) : nlohmann::json(nullptr)},
        {"rank", i + 1},
        {"step_seconds", row.step},
        {"steps_to_target", row.steps},
        {"time_to_target_seconds", row.seconds},
        {"steps_basis", row.basis == reports::StepsBasis::Probe ? "probe" : "curve"},
        {"interval", {row.low, row.high}},
        {"interval_level", row.basis == reports::StepsBasis::Probe ? 0.95 : 0.80},
        {"break_even_bits_per_second", row.scan.break_even},
        {"crossover_bits_per_second", row.crossover}};
    for (const reports::RunData* run : row.summary->config->runs)
      recorder.record_fact(run->run.id, "advice", fact.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

// Each candidate's costs layer by layer on this host, recorded as the fact `layer_costs` of its
// runs, once: a candidate measured before is not measured again.
void record_layer_costs(const std::string& db_path, const reports::ExperimentModel& model,
                        const engine::EngineCatalog& catalog) {
  std::vector<std::pair<const reports::Configuration*, LayerCodecCosts>> measured;
  for (const reports::ConfigSummary& summary : model.summaries) {
    const auto& runs = summary.config->runs;
    if (runs.empty() || !runs.front()->layer_costs.layers.empty()) continue;
    std::optional<LayerCodecCosts> costs;
    try {
      costs = catalog.measure_layer_costs(RunConfig::from_json(runs.front()->run.config));
    } catch (const ConfigError&) {
      continue;  // a configuration this laconic cannot build again: no per-layer advice for it
    }
    if (costs) measured.emplace_back(summary.config, std::move(*costs));
  }
  if (measured.empty()) return;
  auto db = storage::Database::open(db_path);
  storage::Recorder recorder(*db);
  for (const auto& [config, costs] : measured)
    for (const reports::RunData* run : config->runs)
      recorder.record_fact(run->run.id, LayerCodecCosts::kFact, costs.to_json_text());
}

void print_table(const reports::Table& table) {
  RowWriter out(std::cout, Format::Table);
  std::vector<std::string> header;
  for (const auto& c : table.columns) header.push_back(c.header);
  out.header(header);
  for (const auto& row : table.rows) {
    std::vector<storage::Cell> cells;
    for (const auto& text : row) cells.push_back(text_cell(text));
    out.row(cells);
  }
  out.finish();
}

// "+12%": how much longer than the best.
std::string regret_text(double regret) {
  return std::isnan(regret) ? std::string("did not reach the target") : "+" + reports::fixed(regret * 100, 0) + "%";
}

nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json layers_json(const std::vector<reports::LayerCheckRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const reports::LayerCheckRow& r : rows)
    out.push_back({{"candidate", r.candidate},
                   {"min_size", r.predicted.min_size},
                   {"chosen", r.chosen},
                   {"dense_layers", r.predicted.dense_layers},
                   {"predicted_link_bytes", r.predicted.link_bytes},
                   {"measured_link_bytes", number_or_null(r.measured_link_bytes)},
                   {"predicted_codec_seconds", r.predicted.codec_seconds},
                   {"measured_codec_seconds", number_or_null(r.measured_codec)},
                   {"predicted_exchange_seconds", r.predicted.seconds},
                   {"measured_exchange_seconds", number_or_null(r.measured_exchange.mean)},
                   {"measured_exchange_std_seconds", number_or_null(r.measured_exchange.std)},
                   {"seeds", r.measured_exchange.n}});
  return out;
}

// The layer plans against full runs with scope = "layer", where there are any.
void print_layer_check(const std::vector<reports::LayerCheckRow>& rows) {
  if (rows.empty()) return;
  std::cout
      << "\nWhich layers to leave dense, against the full runs with scope = \"layer\" (per step and worker: bytes "
         "sent, encoding and decoding, and those plus the exchange's communication; predicted: "
      << reports::kLayerPlanBasis << "):\n";
  print_table(reports::layer_check_table(rows));
  const std::string text = reports::layer_check_text(rows);
  if (!text.empty()) std::cout << text << "\n";
}

// --check --json FILE: the comparison, for scripts that gather it over setups (bench/advise_regret.py).
void write_check_json(const std::string& path, const AdviseArgs& args, const reports::Advice& advice,
                      const reports::AdviceCheck& check, const std::vector<reports::LayerCheckRow>& layer_rows) {
  const auto advised = [&](const std::string& candidate) -> const reports::AdviceRow* {
    for (const auto* rows : {&advice.ranked, &advice.dropped})
      for (const auto& row : *rows)
        if (row.candidate == candidate) return &row;
    return nullptr;
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : check.rows) {
    const reports::AdviceRow* a = advised(row.candidate);
    rows.push_back(
        {{"candidate", row.candidate},
         {"baseline", a != nullptr && a->baseline},
         {"predicted_crossover_bits_per_second", number_or_null(a ? a->crossover : reports::kNaN)},
         {"predicted_rank", row.predicted_rank},
         {"measured_rank", row.measured_rank},
         {"predicted_step_seconds", number_or_null(row.predicted_step)},
         {"measured_step_seconds", number_or_null(row.measured_step)},
         {"predicted_time_seconds", number_or_null(row.predicted_time)},
         {"measured_time_seconds", number_or_null(row.measured_time)},
         {"predicted_interval_seconds", {number_or_null(row.predicted_low), number_or_null(row.predicted_high)}},
         {"measured_within_interval", row.within ? nlohmann::json(*row.within) : nlohmann::json()}});
  }
  const nlohmann::json out = {{"link", advice.link.text},
                              {"workers", args.workers},
                              {"full", args.check},
                              {"target", advice.target},
                              {"median_step_error", number_or_null(check.median_step_error)},
                              {"best", check.best},
                              {"first", check.first},
                              {"regret", number_or_null(check.regret)},
                              {"baseline_regret", number_or_null(check.baseline_regret)},
                              {"within_interval", check.within},
                              {"with_interval", check.with_interval},
                              {"rows", rows},
                              {"layers", layers_json(layer_rows)}};
  std::ofstream file(path);
  file << out.dump(1) << "\n";
  if (!file.flush()) throw ConfigError(str_cat("--json: cannot write '", path, "'"));
}

// The main comparison: each candidate's step and time to the target, the regret.
void print_check(const AdviseArgs& args, const reports::Advice& advice, const reports::AdviceCheck& check) {
  std::cout << "\nThe advice on " << advice.link.text << " against the full runs of '" << args.check << "' (target "
            << reports::fixed(advice.target, advice.metric.digits) << "):\n";
  print_table(reports::check_table(check));
  std::cout << "\nMedian step error: " << reports::fixed(check.median_step_error * 100, 1) << "%. ";
  if (check.best.empty()) {
    std::cout << "No full run reached the target.\n";
    return;
  }
  std::cout << "Measured fastest to the target: " << check.best << ". The advice's first choice, "
            << (check.first.empty() ? "none" : check.first) << ": " << regret_text(check.regret)
            << "; never compressing: " << regret_text(check.baseline_regret) << ".";
  if (check.with_interval > 0)
    std::cout << " Measured within the advice's interval: " << check.within << " of " << check.with_interval
              << " candidates with both.";
  std::cout << "\n";
}

int check_advice(const AdviseArgs& args, const reports::Advice& advice, storage::Database& db) {
  reports::TargetRule rule;
  rule.value = advice.target;
  const auto full = reports::build_model(db, {args.check}, rule);
  const reports::AdviceCheck check = reports::check_advice(advice, *full);
  const auto layer_rows = reports::check_layers(reports::advice_layers(advice), *full);
  if (check.rows.empty() && layer_rows.empty())
    throw ConfigError(str_cat("experiment '", args.check, "' has no finished run of the advised candidates"));
  if (!args.check_json.empty()) write_check_json(args.check_json, args, advice, check, layer_rows);
  if (!check.rows.empty()) print_check(args, advice, check);
  print_layer_check(layer_rows);
  return 0;
}

// "3 seeds each", "1 to 3 seeds each": what the probes recorded (a --check reads probes that an
// earlier advise trained, with its own --seeds).
std::string seeds_probed(const reports::Advice& advice) {
  std::size_t least = 0, most = 0;
  for (const auto* rows : {&advice.ranked, &advice.dropped})
    for (const reports::AdviceRow& row : *rows) {
      const std::size_t n = row.summary->final_metric.n;
      least = least == 0 ? n : std::min(least, n);
      most = std::max(most, n);
    }
  return least == most ? str_cat(most, most == 1 ? " seed each" : " seeds each")
                       : str_cat(least, " to ", most, " seeds each");
}

void print_advice(const reports::Advice& advice, const std::string& name, std::size_t candidates,
                  const AdviseArgs& args) {
  std::cout << "\nTarget: " << advice.metric.label << (advice.metric.higher_is_better ? " >= " : " <= ")
            << reports::fixed(advice.target, advice.metric.digits) << " (" << advice.target_source << ")\n";
  print_table(reports::advice_table(advice));
  if (const std::string dropped = reports::dropped_text(advice); !dropped.empty()) std::cout << "\n" << dropped << ".\n";
  if (!advice.first_two.empty()) std::cout << "\n" << advice.first_two << ".\n";
  if (!advice.probe_noise.empty()) std::cout << "\n" << advice.probe_noise << ".\n";
  if (!advice.host_costs.empty()) std::cout << "\n" << advice.host_costs << ".\n";
  std::cout << "\nPredicted time to target = steps to the target x the step at " << args.workers << " workers ("
            << (advice.hardware != nullptr
                    ? "compute and codec costs of " + advice.hardware->name
                    : std::string("compute the mean over every probe, compress and wait as probed"))
            << ", messages projected onto " << advice.link.text
            << "). Steps: as the probes took them where they reached the target (" << seeds_probed(advice)
            << "; 95% interval over seeds), else extrapolated from their learning curve (80% interval "
               "of the fit). Projections, not measurements. "
            << advice.ranked.size() << " of " << candidates << " candidates ranked. Probes recorded as experiment '"
            << name << "' in " << args.db << " (laconic report " << name << " --db " << args.db
            << "; docs/advise.md).\n";
  const std::vector<reports::AdviceLayers> layers = reports::advice_layers(advice);
  if (layers.empty()) return;
  const reports::Table table = reports::layer_plan_table(layers.front().plan, layers.front().candidate);
  std::cout << "\n" << table.title << ":\n";
  print_table(table);
  std::cout << "\nWhich layers to leave dense (" << reports::kLayerPlanBasis << "):\n"
            << reports::advice_layers_text(layers) << "\n";
}

// The probes of `plan` that did not finish (stopped, or never begun), by run name.
std::vector<std::string> probes_missing(const lua::ExperimentPlan& plan, const reports::ExperimentModel& model) {
  std::set<std::string> finished;
  for (const reports::RunData& r : model.compared) finished.insert(r.run.name);
  std::vector<std::string> missing;
  for (const RunConfig& probe : plan.runs)
    if (finished.count(probe.name) == 0) missing.push_back(probe.name);
  return missing;
}

// After the table: which probes are missing, and why; an interrupted advise says how to finish.
void print_missing(const std::vector<std::string>& missing, bool interrupted, bool spent) {
  if (missing.empty()) return;
  std::string names;
  for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
  std::cerr << "laconic advise: " << (interrupted ? "interrupted (Ctrl-C or SIGTERM): " : "")
            << "the table ranks only the probes that finished; " << missing.size() << " not probed"
            << (spent && !interrupted ? " within the budget" : "") << ": " << names << ".\n"
            << "laconic advise: run the same command again to finish them (the probes recorded are kept)"
            << (interrupted ? "; the ranking above may change once they have run" : "") << ".\n";
}

}  // namespace

double parse_budget(const std::string& text) { return parse_duration("--budget", text); }

std::string budget_forecast(std::size_t probes, std::size_t finished, std::size_t finished_before, double elapsed,
                            double budget, const std::string& budget_text) {
  if (finished <= finished_before || elapsed <= 0) return "";
  const double pace = elapsed / static_cast<double>(finished - finished_before);
  const double total = elapsed + pace * static_cast<double>(probes > finished ? probes - finished : 0);
  if (total <= budget) return "";
  return str_cat("the ", probes, " probes would take about ", reports::seconds(total / 60), " min at the pace of the ",
                 "first (", reports::seconds(pace), " s each), past the ", budget_text,
                 " budget: those not finished by then are left out, and candidates left with one probe have no "
                 "interval. To fit it: fewer seeds (--seeds 1), fewer candidates (a sweep of fewer compressors), "
                 "shorter probes (--set max_steps=N), or a larger --budget");
}

std::string advise_experiment_name(const std::string& experiment, std::int64_t workers, const std::string& link,
                                   const std::string& placement) {
  std::string tail = link;
  for (char& c : tail)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
  return str_cat(experiment, "-advise-w", workers, "-", tail, placement == "processes" ? "-processes" : "");
}

std::string probe_placement(const std::string& requested, std::int64_t workers, int cores) {
  if (requested == "threads" || requested == "processes") return requested;
  if (requested != "auto")
    throw ConfigError(str_cat("--placement must be auto, threads or processes, got '", requested, "'"));
  return workers <= cores ? "processes" : "threads";
}

std::vector<std::string> probe_overrides(const AdviseArgs& args, const std::string& name,
                                         const std::string& placement) {
  std::vector<std::string> out = args.overrides;
  std::string seeds;
  for (std::int64_t s = 1; s <= args.seeds; ++s) seeds += (s > 1 ? "," : "") + std::to_string(s);
  for (const std::string& set :
       {str_cat("name=", name), str_cat("workers=", args.workers), "placement=" + placement, "seeds=" + seeds})
    out.push_back(set);
  for (const std::string& set : link_overrides(args.link)) out.push_back(set);
  return out;
}

std::int64_t probe_order(const RunConfig& probe) {
  const bool baseline = reports::parse_run(storage::RunRow{}, probe.to_json().dump()).is_baseline;
  return 2 * probe.seed + (baseline ? 0 : 1);
}

int advise_command(const AdviseArgs& args, const std::atomic<bool>& stop) {
  const LinkSpec link = parse_link(args.link);
  const double budget = parse_budget(args.budget);
  if (args.workers < 1) throw ConfigError("--workers must be at least 1");
  const engine::EngineCatalog catalog;
  lua::LoadOptions load;
  load.overrides = args.overrides;
  const lua::ExperimentPlan plan = lua::load_experiment(args.file, catalog, load);
  if (plan.runs.empty()) throw ConfigError(str_cat("'", args.file, "' has no runs to advise on"));
  AdviseArgs candidates = args;
  if (!sweeps_compressors(plan)) {
    candidates.overrides.push_back(kDefaultCandidates);
    std::cout << "laconic advise: '" << args.file << "' sweeps no compressor; advising on the default candidates: "
              << std::string(kDefaultCandidates).substr(std::string("compressor=").size()) << "\n";
  }
  const std::string placement = probe_placement(args.placement, args.workers, controller::host_cores());
  const std::string name = advise_experiment_name(plan.runs.front().experiment, args.workers, args.link, placement);

  const std::optional<HardwareProfile> given =
      args.hardware.empty() ? std::nullopt : std::optional<HardwareProfile>(read_hardware_profile(args.hardware));
  if (!args.check.empty()) {  // the probes recorded, against full runs
    auto db = storage::Database::open_read_only(args.db);
    const auto model = reports::build_model(*db, {name}, reports::TargetRule{args.target, {}, {}});
    const std::optional<HardwareProfile> hardware = given ? given : reports::experiment_hardware(*model);
    const reports::Advice advice = reports::advice_of(*model, link, hardware ? &*hardware : nullptr);
    print_advice(advice, name, model->summaries.size(), args);
    return check_advice(args, advice, *db);
  }

  controller::SweepOptions run;
  run.file = args.file;
  run.overrides = probe_overrides(candidates, name, placement);
  load.overrides = run.overrides;
  const lua::ExperimentPlan probes = lua::load_experiment(args.file, catalog, load);
  const RunConfig first = probes.runs.front();
  const std::int64_t steps = probe_steps(first, catalog);
  // eval_every giving about `evaluations` evaluations over a probe.
  run.overrides.push_back(str_cat("eval_every=", std::max<std::int64_t>(1, steps / args.evaluations)));
  run.db = args.db;
  run.resume = true;  // probes already recorded are not trained again
  run.force = true;   // a file given another candidate: the others' probes still count
  run.stop_reason = "stopped by laconic advise: its --budget was spent, or Ctrl-C / SIGTERM";
  run.resume_hint = false;  // asked again, advise continues its probes itself
  run.drop_check = controller::ProbeWatch(args.db, name, link, steps, args.evaluations, args.target);
  run.train_order = probe_order;
  run.quiet = args.quiet;
  run.executable = args.executable;
  std::atomic<bool> probe_stop{false};
  const auto started = Clock::now();
  bool spent = false;
  {
    BudgetForecast forecast(args.db, name, probes.runs.size(), budget, args.budget);
    BudgetWatch watch(budget, stop, probe_stop, &forecast);
    controller::run_sweep(run, probe_stop);
    spent = watch.spent();
  }
  const double used = std::chrono::duration<double>(Clock::now() - started).count();
  std::cout << "laconic advise: probes took " << reports::seconds(used) << " s of the " << args.budget << " budget"
            << (spent ? " (spent: the probes not finished are left out)" : "") << "\n";

  auto db = storage::Database::open_read_only(args.db);
  reports::TargetRule rule;
  rule.value = args.target;
  auto model = reports::build_model(*db, {name}, rule);
  if (!model->summaries.empty()) {
    db.reset();
    record_layer_costs(args.db, *model, catalog);
    db = storage::Database::open_read_only(args.db);
    model = reports::build_model(*db, {name}, rule);
  }
  if (model->summaries.empty()) {
    std::cerr << "laconic advise: no probe finished"
              << (spent ? " within the budget (--budget " + args.budget + ")" : "")
              << "; nothing to rank (laconic runs --experiment " << name << " --db " << args.db << ")\n";
    return stop ? 130 : 1;
  }
  const std::optional<HardwareProfile> hardware = given ? given : reports::experiment_hardware(*model);
  const reports::Advice advice = reports::advice_of(*model, link, hardware ? &*hardware : nullptr);
  print_advice(advice, name, model->summaries.size(), args);
  const bool interrupted = stop;
  print_missing(probes_missing(probes, *model), interrupted, spent);
  db.reset();
  record_predictions(args.db, advice, args);
  // Interrupted, the ranking is of what finished, not the answer: the exit status says so.
  if (interrupted) return 130;
  if (advice.ranked.empty()) return 1;
  return 0;
}

}  // namespace laconic::cli
