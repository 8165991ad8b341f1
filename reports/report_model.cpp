#include "reports/report_model.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "engine/core/metric_keys.hpp"
#include "reports/aggregate.hpp"
#include "reports/experiment_runs.hpp"
#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

std::vector<RunData> collect(storage::Database& db, const std::vector<ReportRun>& runs, const std::string& metric) {
  std::vector<RunData> out;
  out.reserve(runs.size());  // Configurations point into it
  for (const auto& run : runs) out.push_back(collect_run_data(db, run, metric));
  return out;
}

}  // namespace

double run_compute_utilization(storage::Database& db, const storage::RunRow& run) {
  const RunData data = collect_step_parts(db, parse_run(run, run.config));
  const Configuration alone{.row = "", .column = "", .label = run.name, .runs = {&data}};
  return compute_utilization(summarize(alone));
}

std::unique_ptr<ExperimentModel> build_model(storage::Database& db, const std::vector<std::string>& experiments,
                                             const TargetRule& rule) {
  auto m = std::make_unique<ExperimentModel>();
  m->runs = load_experiment_runs(db, experiments);
  m->metric = test_metric_of(choose_test_metric(db, m->runs.finished));
  m->metric_key = m->metric.key;
  // Tuned experiments compare their tune=best runs; the trials get a section of their own.
  std::vector<ReportRun> plain, trial, best;
  for (const auto& run : m->runs.finished)
    (run.tune == "trial" ? trial : run.tune == "best" ? best : plain).push_back(run);
  m->compared = collect(db, best.empty() ? plain : best, m->metric_key);
  m->tuned = !trial.empty() || !best.empty();
  if (m->tuned) {
    m->trial_data = collect(db, trial, m->metric_key);
    m->tuned_keys = infer_tuned_keys(m->trial_data, m->compared);
  }
  m->grid = group_configurations(m->compared, std::set<std::string>(m->tuned_keys.begin(), m->tuned_keys.end()));
  for (const auto& c : m->grid.configurations) m->summaries.push_back(summarize(c));
  m->answer = std::make_unique<Answer>(m->grid, m->summaries, m->metric, rule);
  return m;
}

namespace {

// What separates experiments of one file: the `--set` flags their compared runs were started
// with ("epochs=2", "none"; several sets joined by " | ").
std::string overrides_of(const std::vector<RunData>& runs, const std::string& experiment) {
  std::set<std::string> sets;
  for (const RunData& run : runs)
    if (run.run.config.value("experiment", "") == experiment) sets.insert(run.facts.overrides.empty() ? "none" : run.facts.overrides);
  std::string out;
  for (const std::string& set : sets) out += (out.empty() ? "" : " | ") + set;
  return out.empty() ? std::string(kMissing) : out;
}

// A path the run's configuration holds: relative to the directory `laconic run` ran in. Read from
// here when it is there (or the run did not record its directory), else from that directory.
std::string recorded_path(const std::string& path, const std::string& working_directory) {
  if (path.empty() || path.front() == '/' || working_directory.empty() || std::filesystem::exists(path)) return path;
  return (std::filesystem::path(working_directory) / path).string();
}

// The profile a run recorded before the resolved fact names: profile { file } by its file,
// by_hand { label, ... } by its fields and its compressors' file.
std::optional<HardwareProfile> recorded_hardware(const RunData& run) {
  const nlohmann::json spec = run.run.config.value("hardware", nlohmann::json::object());
  if (!spec.is_object()) return std::nullopt;
  const bool by_hand = spec.contains("label");
  const char* file_field = by_hand ? "compressors" : "file";
  const bool names_file = spec.contains(file_field) && spec[file_field].is_string();
  if (!by_hand && !names_file) return std::nullopt;  // measured()
  const std::string file = names_file ? recorded_path(spec[file_field].get<std::string>(), run.facts.working_directory) : "";
  try {
    return by_hand ? hardware_profile_by_hand(spec, file) : read_hardware_profile(file);
  } catch (const ConfigError& e) {
    throw ConfigError(str_cat(e.what(), "; run ", run.run.id, " names it (hardware = ", spec.value("name", "?"),
                              " { ... }): put it back, or give a profile with --hardware"));
  }
}

}  // namespace

std::optional<HardwareProfile> experiment_hardware(const ExperimentModel& model) {
  for (const RunData& run : model.compared)
    if (run.facts.resolved) return run.facts.resolved->hardware;  // what the run resolved its hardware into
  // Runs recorded before the resolved fact: the recorded spec's fields say which it was.
  for (const RunData& run : model.compared)
    if (auto profile = recorded_hardware(run)) return profile;
  return std::nullopt;
}

ReportDraft build_report(storage::Database& db, const std::vector<std::string>& experiments, const TargetRule& rule,
                         const std::vector<LinkSpec>& links, const HardwareProfile* hardware,
                         const std::vector<SectionProvider>& added) {
  const auto model = build_model(db, experiments, rule);
  std::optional<HardwareProfile> named;
  if (hardware == nullptr && (named = experiment_hardware(*model))) hardware = &*named;
  return report_of(*model, experiments, links, hardware, added);
}

namespace {

// A --link without a latency takes the runs' own, where they share one, so that its projection and
// the break-even scan (at the runs' latency) speak of one link; else the default, 50 us. Either way
// its name says the latency it was projected at ("10Gbit, 1 ms"), and a fact says where it came from.
std::vector<LinkSpec> links_with_latency(const std::vector<LinkSpec>& given, const std::vector<RunData>& runs,
                                         std::vector<Fact>& facts) {
  std::set<double> latencies;
  for (const RunData& r : runs)
    if (r.run.link) latencies.insert(r.run.link->latency_seconds);
  std::vector<LinkSpec> links;
  for (LinkSpec link : given) {
    if (!link.latency_given) {
      const bool shared = latencies.size() == 1;
      if (shared) link.latency_seconds = *latencies.begin();
      const std::string original = link.text;
      link.text = str_cat(link.text, ", ", latency_text(link.latency_seconds));
      link.latency_given = true;
      facts.push_back({"--link " + original,
                       str_cat("projected at ", latency_text(link.latency_seconds), " latency (",
                               shared ? "the runs' own" : "the default: the runs' links differ",
                               "); --link BANDWIDTH,LATENCY gives another"),
                       false});
    }
    links.push_back(link);
  }
  return links;
}

// "cpu (every run)"; "cpu: 3 runs, cuda:0: 2 runs": where the compared runs trained (their
// resolved device; the CPU for runs recorded before it).
std::string devices_text(const std::vector<RunData>& runs) {
  std::map<std::string, int> count;
  for (const RunData& run : runs) ++count[run.facts.trained_on()];
  if (count.size() == 1) return str_cat(count.begin()->first, " (every run)");
  std::string text;
  for (const auto& [device, n] : count) text += str_cat(text.empty() ? "" : ", ", device, ": ", n, n == 1 ? " run" : " runs");
  return text;
}

}  // namespace

ReportDraft report_of(const ExperimentModel& m, const std::vector<std::string>& experiments,
                      const std::vector<LinkSpec>& given_links, const HardwareProfile* hardware,
                      const std::vector<SectionProvider>& added) {
  const ExperimentModel* model = &m;
  const ExperimentRuns& runs = model->runs;
  const Grid& grid = model->grid;
  const std::vector<ConfigSummary>& summaries = model->summaries;
  const TestMetric& metric = model->metric;
  const Answer& answer = *model->answer;
  const bool tuned = model->tuned;
  ReportDraft draft{{}, {}, model->metric_key, kNaN, {}};
  Report& report = draft.report;
  std::string names;
  for (const auto& e : experiments) names += (names.empty() ? "" : " and ") + e;
  report.title = str_cat(experiments.size() == 1 ? "Experiment " : "Experiments ", names);
  std::set<std::pair<std::string, std::string>> files;
  for (const auto& e : runs.versions) {  // an edited experiment file is a new experiments row
    if (!files.insert({e.file_path, e.file_hash}).second) continue;  // experiments of one file: said once
    report.facts.push_back({"file", e.file_path, true});
    report.facts.push_back({"hash", e.file_hash, true});
  }
  if (experiments.size() > 1)
    for (const std::string& name : experiments)
      report.facts.push_back({"overrides, " + name, overrides_of(model->compared, name), false});
  report.facts.push_back({"runs", str_cat(runs.latest.size(), " run names, ", runs.recorded, " runs recorded"), false});
  const std::vector<LinkSpec> links = links_with_latency(given_links, model->compared, report.facts);
  const SectionInput in{grid, summaries, metric, answer, hardware};
  if (hardware != nullptr)
    report.facts.push_back({"hardware", str_cat(hardware->name, " (", hardware->origin, "; projected)"), false});

  if (!answer.baseline_source().empty()) report.facts.push_back({"baseline", answer.baseline_source(), false});
  report.facts.push_back(
      {"test metric", str_cat(metric.key, " (", metric.higher_is_better ? "higher" : "lower", " is better)"), false});
  report.facts.push_back({"compared",
                          str_cat(model->compared.size(), " FINISHED runs in ", grid.configurations.size(),
                                  " configurations", tuned ? " (tune=best runs)" : ""),
                          false});
  report.facts.push_back({"trained on", devices_text(model->compared), false});
  if (!grid.configurations.empty()) {
    draft.target = answer.targets().front().value;
    for (const RowTarget& t : answer.targets()) {
      if (std::isnan(t.value)) continue;
      const std::string line = str_cat(
          metric.key, metric.higher_is_better ? " >= " : " <= ", fixed(t.value, metric.digits), " (", t.source, ")");
      draft.targets.push_back(grid.rows.size() > 1 ? str_cat(t.row, ": ", line) : line);
      report.facts.push_back({grid.rows.size() > 1 ? "target, " + t.row : "target", line, false});
    }
    report.sections.push_back(summary_section(in, links));
    for (const SectionProvider& provide : added)
      if (auto section = provide(*model, hardware)) report.sections.push_back(std::move(*section));
    report.sections.push_back(final_metric_section(in));
    report.sections.push_back(compression_section(in, draft.plots));
    report.sections.push_back(step_time_section(in, draft.plots));
    if (!links.empty()) report.sections.push_back(other_links_section(in, links));
    if (hardware != nullptr) report.sections.push_back(hardware_section(in, links));
    if (auto kinds = link_kinds_section(in)) report.sections.push_back(std::move(*kinds));
    if (auto slow = slow_rank_section(in)) report.sections.push_back(std::move(*slow));
    if (auto churn = churn_section(in)) report.sections.push_back(std::move(*churn));
    report.sections.push_back(convergence_section(in, draft.plots));
    if (!std::isnan(draft.target)) report.sections.push_back(target_section(in));
    bool messages_recorded = false;
    for (const auto& s : summaries) messages_recorded = messages_recorded || !std::isnan(s.messages.mean);
    if (!std::isnan(draft.target) && messages_recorded) report.sections.push_back(pays_off_section(in, draft.plots));
    report.sections.push_back(bits_section(in, draft.plots));
  }
  if (tuned) report.sections.push_back(tuning_section(model->trial_data, model->compared, model->tuned_keys, metric));
  report.sections.push_back(runs_section(runs, metric));
  return draft;
}

}  // namespace laconic::reports
