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

#include "advise/advice.hpp"
#include "advise/advice_check.hpp"
#include "advise/layer_check.hpp"
#include "advise/layer_plan.hpp"
#include "advise/probe_watch.hpp"
#include "cli/output.hpp"
#include "controller/host_load.hpp"
#include "controller/run_sweep.hpp"
#include "engine/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/units.hpp"
#include "engine/train/data/dataset.hpp"
#include "engine/train/worker.hpp"
#include "lua/experiment.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/format.hpp"
#include "storage/database.hpp"
#include "storage/queries.hpp"
#include "storage/recorder.hpp"
#include "storage/run_facts.hpp"

namespace laconic::cli {
namespace {

// On islands: " between islands (inside: 10Gbit at 10 us, the file's)"; "" on one link.
std::string islands_words(const advise::Advice& advice) {
  for (const advise::AdviceRow& row : advice.ranked)
    if (const reports::RecordedTraffic traffic = reports::traffic_of(*row.summary); traffic.on_islands())
      return str_cat(" between islands (inside: ", traffic.inside->text, " at ", traffic.inside->latency_seconds * 1e6,
                     " us, the file's own)");
  return "";
}


using Clock = std::chrono::steady_clock;

// The candidates advised on when the file sweeps no compressor, optimizer or schedule: dense
// first (the baseline), then one of each family, under the file's topology (an allreduce carries
// the ones whose payloads do not sum by an allgather). docs/advise.md lists them.
constexpr const char* kDefaultCandidates =
    "compressor=sweep{none(), fp16(), topk{ratio=0.01, error_feedback=true}, powersgd{rank=2}, qsgd{levels=16}, "
    "ef_signsgd()}";

// Whether the file lists its own candidates: it sweeps a compressor, an optimizer (one that
// compresses, as demo or onebit_adam, is a candidate of its own) or a schedule.
bool sweeps_candidates(const lua::ExperimentPlan& plan) {
  for (const RunConfig& run : plan.runs)
    for (const char* method : {"compressor", "optimizer", "schedule"})
      if (run.swept.count(method) > 0) return true;
  return false;
}

// The steps of a probe: those of the first run (at the advised workers, so on its shard).
std::int64_t probe_steps(const RunConfig& probe, const engine::EngineCatalog& catalog) {
  const auto parts = catalog.build(probe, 0);
  return probe.epochs * train::steps_per_epoch(probe, *parts.dataset);  // max_steps counted there
}

// Each ranked candidate's prediction, as the fact `advice` of each of its runs (what a later
// check against full runs reads).
void record_predictions(const std::string& db_path, const advise::Advice& advice, const advise::AdviseOptions& args) {
  auto db = storage::Database::open(db_path);
  storage::Recorder recorder(*db);
  for (std::size_t i = 0; i < advice.ranked.size(); ++i) {
    const advise::AdviceRow& row = advice.ranked[i];
    const nlohmann::json fact = {
        {"version", 1},
        {"workers", args.workers},
        {"link", advice.link.text},
        {"hardware", advice.hardware != nullptr ? nlohmann::json(advice.hardware->name) : nlohmann::json(nullptr)},
        {"rank", i + 1},
        {"step_seconds", row.step},
        {"steps_to_target", row.steps},
        {"time_to_target_seconds", row.seconds},
        {"steps_basis", row.basis == advise::StepsBasis::Probe ? "probe" : "curve"},
        {"interval", {row.low, row.high}},
        {"interval_level", row.basis == advise::StepsBasis::Probe ? 0.95 : 0.80},
        {"break_even_bits_per_second", row.scan.break_even},
        {"crossover_bits_per_second", row.crossover}};
    for (const reports::RunData* run : row.summary->config->runs)
      recorder.record_fact(run->run.id, storage::fact::kAdvice, fact.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
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

nlohmann::json layers_json(const std::vector<advise::LayerCheckRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const advise::LayerCheckRow& r : rows)
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
void print_layer_check(const std::vector<advise::LayerCheckRow>& rows) {
  if (rows.empty()) return;
  std::cout
      << "\nWhich layers to leave dense, against the full runs with scope = \"layer\" (per step and worker: bytes "
         "sent, encoding and decoding, and those plus the exchange's communication; predicted: "
      << advise::kLayerPlanBasis << "):\n";
  print_table(advise::layer_check_table(rows));
  const std::string text = advise::layer_check_text(rows);
  if (!text.empty()) std::cout << text << "\n";
}

// --check --json FILE: the comparison, for scripts that gather it over setups (bench/advise_regret.py).
void write_check_json(const std::string& path, const advise::AdviseOptions& args, const advise::Advice& advice,
                      const advise::AdviceCheck& check, const std::vector<advise::LayerCheckRow>& layer_rows) {
  const auto advised = [&](const std::string& candidate) -> const advise::AdviceRow* {
    for (const auto* rows : {&advice.ranked, &advice.dropped})
      for (const auto& row : *rows)
        if (row.candidate == candidate) return &row;
    return nullptr;
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : check.rows) {
    const advise::AdviceRow* a = advised(row.candidate);
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
void print_check(const advise::AdviseOptions& args, const advise::Advice& advice, const advise::AdviceCheck& check) {
  std::cout << "\nThe advice on " << advice.link.text << " against the full runs of '" << args.check << "' (target "
            << reports::fixed(advice.target, advice.metric.digits) << "):\n";
  print_table(advise::check_table(check));
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

int check_advice(const advise::AdviseOptions& args, const advise::Advice& advice, storage::Database& db) {
  reports::TargetRule rule;
  rule.value = advice.target;
  const auto full = reports::build_model(db, {args.check}, rule);
  const advise::AdviceCheck check = advise::check_advice(advice, *full);
  const auto layer_rows = advise::check_layers(advise::advice_layers(advice), *full);
  if (check.rows.empty() && layer_rows.empty())
    throw ConfigError(str_cat("experiment '", args.check, "' has no finished run of the advised candidates"));
  if (!args.check_json.empty()) write_check_json(args.check_json, args, advice, check, layer_rows);
  if (!check.rows.empty()) print_check(args, advice, check);
  print_layer_check(layer_rows);
  return 0;
}

// "3 seeds each", "1 to 3 seeds each": what the probes recorded (a --check reads probes that an
// earlier advise trained, with its own --seeds).
std::string seeds_probed(const advise::Advice& advice) {
  std::size_t least = 0, most = 0;
  for (const auto* rows : {&advice.ranked, &advice.dropped})
    for (const advise::AdviceRow& row : *rows) {
      const std::size_t n = row.summary->final_metric.n;
      least = least == 0 ? n : std::min(least, n);
      most = std::max(most, n);
    }
  return least == most ? str_cat(most, most == 1 ? " seed each" : " seeds each")
                       : str_cat(least, " to ", most, " seeds each");
}

void print_advice(const advise::Advice& advice, const std::string& name, std::size_t candidates,
                  const advise::AdviseOptions& args) {
  std::cout << "\nTarget: " << advice.metric.label << (advice.metric.higher_is_better ? " >= " : " <= ")
            << reports::fixed(advice.target, advice.metric.digits) << " (" << advice.target_source << ")\n";
  print_table(advise::advice_table(advice));
  if (const std::string dropped = advise::dropped_text(advice); !dropped.empty()) std::cout << "\n" << dropped << ".\n";
  if (!advice.first_two.empty()) std::cout << "\n" << advice.first_two << ".\n";
  if (!advice.probe_noise.empty()) std::cout << "\n" << advice.probe_noise << ".\n";
  if (!advice.host_costs.empty()) std::cout << "\n" << advice.host_costs << ".\n";
  std::cout << "\nPredicted time to target = steps to the target x the step at " << args.workers << " workers ("
            << (advice.hardware != nullptr
                    ? "compute and codec costs of " + advice.hardware->name
                    : std::string("compute the mean over every probe, compress and wait as probed"))
            << ", messages projected onto " << advice.link.text << islands_words(advice)
            << "). Steps: as the probes took them where they reached the target (" << seeds_probed(advice)
            << "; 95% interval over seeds), else extrapolated from their learning curve (80% interval "
               "of the fit). Projections, not measurements. "
            << advice.ranked.size() << " of " << candidates << " candidates ranked. Probes recorded as experiment '"
            << name << "' in " << args.db << " (laconic report " << name << " --db " << args.db
            << "; docs/advise.md).\n";
  const std::vector<advise::AdviceLayers> layers = advise::advice_layers(advice);
  if (layers.empty() && !islands_words(advice).empty())
    std::cout << "\nNo layer plan on islands: it puts each layer's bytes on one link, and here they split between "
                 "the link inside an island and the one between (docs/advise.md).\n";
  if (layers.empty()) return;
  const reports::Table table = advise::layer_plan_table(layers.front().plan, layers.front().candidate);
  std::cout << "\n" << table.title << ":\n";
  print_table(table);
  std::cout << "\nWhich layers to leave dense (" << advise::kLayerPlanBasis << "):\n"
            << advise::advice_layers_text(layers) << "\n";
}

// The probes of `plan` that did not finish, by run name: those that diverged (a result: trained
// again they diverge again), and the rest (stopped, or never begun).
struct UnfinishedProbes {
  std::vector<std::string> diverged, missing;
};

UnfinishedProbes probes_unfinished(const lua::ExperimentPlan& plan, const reports::ExperimentModel& model) {
  std::set<std::string> finished, diverged;
  for (const reports::RunData& r : model.compared) finished.insert(r.run.name);
  for (const storage::RunRow& r : model.runs.latest)
    if (r.status == storage::RunStatus::Diverged) diverged.insert(r.name);
  UnfinishedProbes out;
  for (const RunConfig& probe : plan.runs)
    if (finished.count(probe.name) == 0) (diverged.count(probe.name) ? out.diverged : out.missing).push_back(probe.name);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// After the table: which probes diverged, which are missing, and why; an interrupted advise says
// how to finish.
void print_missing(const UnfinishedProbes& unfinished, bool interrupted, bool spent) {
  if (!unfinished.diverged.empty())
    std::cerr << "laconic advise: " << unfinished.diverged.size()
              << " diverged (not ranked; laconic show ID says where): " << joined(unfinished.diverged) << ".\n";
  const std::vector<std::string>& missing = unfinished.missing;
  if (missing.empty()) return;
  std::cerr << "laconic advise: " << (interrupted ? "interrupted (Ctrl-C or SIGTERM): " : "")
            << "the table ranks only the probes that finished; " << missing.size() << " not probed"
            << (spent && !interrupted ? " within the budget" : "") << ": " << joined(missing) << ".\n"
            << "laconic advise: run the same command again to finish them (the probes recorded are kept)"
            << (interrupted ? "; the ranking above may change once they have run" : "") << ".\n";
}

}  // namespace

int advise_command(const advise::AdviseOptions& args, const std::atomic<bool>& stop) {
  const LinkSpec link = parse_link(args.link);
  const double budget = advise::parse_budget(args.budget);
  if (args.workers < 1) throw ConfigError("--workers must be at least 1");
  const engine::EngineCatalog catalog;
  lua::LoadOptions load;
  load.overrides = args.overrides;
  const lua::ExperimentPlan plan = lua::load_experiment(args.file, catalog, load);
  if (plan.runs.empty()) throw ConfigError(str_cat("'", args.file, "' has no runs to advise on"));
  advise::AdviseOptions candidates = args;
  if (!sweeps_candidates(plan)) {
    candidates.overrides.push_back(kDefaultCandidates);
    std::cout << "laconic advise: '" << args.file
              << "' sweeps no compressor, optimizer or schedule; advising on the default candidates: "
              << std::string(kDefaultCandidates).substr(std::string("compressor=").size()) << "\n";
  }
  const RankPlacement placement = advise::probe_placement(args.placement, args.workers, controller::host_cores());
  const std::string name = advise::advise_experiment_name(plan.runs.front().experiment, args.workers, args.link, placement);

  const std::optional<HardwareProfile> given =
      args.hardware.empty() ? std::nullopt : std::optional<HardwareProfile>(read_hardware_profile(args.hardware));
  if (!args.check.empty()) {  // the probes recorded, against full runs
    auto db = storage::Database::open_read_only(args.db);
    const auto model = reports::build_model(*db, {name}, reports::TargetRule{args.target, {}, {}});
    const std::optional<HardwareProfile> hardware = given ? given : reports::experiment_hardware(*model);
    const advise::Advice advice = advise::advice_of(*model, link, hardware ? &*hardware : nullptr);
    print_advice(advice, name, model->summaries.size(), args);
    return check_advice(args, advice, *db);
  }

  controller::SweepOptions run;
  run.file = args.file;
  // On islands (network = cluster { }), --link is the link between them; inside stays the file's.
  const bool islands = plan.runs.front().network.name == "cluster";
  run.overrides = advise::probe_overrides(candidates, name, placement, islands);
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
  run.drop_check = advise::ProbeWatch(args.db, name, link, steps, args.evaluations, args.target);
  run.train_order = advise::probe_order;
  run.quiet = args.quiet;
  run.executable = args.executable;
  std::atomic<bool> probe_stop{false};
  const auto started = Clock::now();
  bool spent = false;
  {
    advise::BudgetForecast forecast(args.db, name, probes.runs.size(), budget, args.budget);
    advise::BudgetWatch watch(budget, stop, probe_stop, &forecast);
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
  const advise::Advice advice = advise::advice_of(*model, link, hardware ? &*hardware : nullptr);
  print_advice(advice, name, model->summaries.size(), args);
  const bool interrupted = stop;
  print_missing(probes_unfinished(probes, *model), interrupted, spent);
  db.reset();
  record_predictions(args.db, advice, args);
  // Interrupted, the ranking is of what finished, not the answer: the exit status says so.
  if (interrupted) return 130;
  if (advice.ranked.empty()) return 1;
  return 0;
}

}  // namespace laconic::cli
