// GET /api/experiments/NAME: the report's model of an experiment, as the experiment page draws
// it (ui/api.hpp). The numbers are the report's own (reports/report_model.hpp): the page words
// and draws them, it computes none.
#include <cmath>
#include <optional>

#include "advise/advice.hpp"
#include "engine/core/error.hpp"
#include "engine/core/hardware_profile.hpp"
#include "reports/aggregate.hpp"
#include "reports/answer.hpp"
#include "reports/report_model.hpp"
#include "ui/api.hpp"

namespace laconic::ui {
namespace {

using nlohmann::json;

// The `id` of a configuration: its place among the grid's configurations (and `configurations`).
std::size_t configuration_id(const reports::ExperimentModel& m, const reports::Configuration& c) {
  return static_cast<std::size_t>(&c - m.grid.configurations.data());
}

json stats_json(const reports::Stats& s) {
  return {{"mean", number_or_null(s.mean)}, {"std", number_or_null(s.std)}, {"n", s.n}};
}

// Mean bytes sent per run of a configuration (over its runs).
double bytes_sent(const reports::ConfigSummary& s) {
  double sum = 0;
  for (const reports::RunData* run : s.config->runs) sum += run->bytes_sent;
  return s.config->runs.empty() ? std::nan("") : sum / static_cast<double>(s.config->runs.size());
}

// The configurations no other beats on both the metric and the bytes sent.
std::vector<bool> pareto(const std::vector<reports::ConfigSummary>& summaries, const reports::TestMetric& metric) {
  std::vector<bool> front(summaries.size(), false);
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    const double m = summaries[i].final_metric.mean, b = bytes_sent(summaries[i]);
    if (!std::isfinite(m) || !std::isfinite(b)) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < summaries.size() && !dominated; ++j) {
      const double mj = summaries[j].final_metric.mean, bj = bytes_sent(summaries[j]);
      if (j == i || !std::isfinite(mj) || !std::isfinite(bj)) continue;
      const bool as_good = (metric.higher_is_better ? mj >= m : mj <= m) && bj <= b;
      const bool better = (metric.higher_is_better ? mj > m : mj < m) || bj < b;
      dominated = as_good && better;
    }
    front[i] = !dominated;
  }
  return front;
}

// A time to target as the report has it: the numbers, and the report's own words for them.
json time_json(const reports::TimeToTarget& t) {
  return {{"seconds", number_or_null(t.seconds)},
          {"low", number_or_null(t.low)},
          {"high", number_or_null(t.high)},
          {"reached", t.reached},
          {"runs", t.runs},
          {"text", reports::time_text(t)}};
}

// A bandwidth as the report writes it ("2.5 Gbit/s", reports::rate_text), or null.
json rate_or_null(double bits_per_second) {
  return std::isfinite(bits_per_second) ? json(reports::rate_text(bits_per_second)) : json(nullptr);
}

// Time to target and the verdict against the baseline at each scanned bandwidth: what the page's
// bandwidth slider moves through; with `hardware`, the steps projected onto it.
json scan_json(const reports::Answer& answer, const reports::ConfigSummary& s,
               const HardwareProfile* hardware = nullptr) {
  json times = json::array(), seconds = json::array(), versus = json::array(), versus_text = json::array();
  for (const double rate : reports::scanned_bandwidths()) {
    const reports::AnswerLink on = answer.scanned_link(s, rate, hardware);
    const reports::TimeToTarget t = answer.time_to_target(s, on);
    const reports::Comparison c = answer.compare(s, on);
    seconds.push_back(number_or_null(t.seconds));
    times.push_back(reports::time_text(t));
    versus.push_back(reports::versus_word(c.versus));
    versus_text.push_back(reports::comparison_text(c, t));
  }
  const reports::BandwidthScan scan = answer.scan(s, hardware);
  const double latency = answer.scanned_link(s, reports::scanned_bandwidths().front(), hardware).spec->latency_seconds;
  return {{"latency", reports::latency_text(latency)},
          {"seconds", seconds},
          {"time_text", times},
          {"versus", versus},
          {"versus_text", versus_text},
          {"break_even", number_or_null(scan.break_even)},
          {"break_even_text", rate_or_null(scan.break_even)},
          {"crossover", number_or_null(scan.crossover)},
          {"crossover_text", rate_or_null(scan.crossover)},
          {"text", scan.text}};
}

json configuration_json(const reports::ExperimentModel& m, const reports::ConfigSummary& s, bool on_front,
                        const HardwareProfile* hardware) {
  const reports::Answer& answer = *m.answer;
  const reports::Verdict& v = answer.verdict(s);
  json runs = json::array(), run_names = json::array();
  bool thread_ranks = false;
  for (const reports::RunData* run : s.config->runs) {
    runs.push_back(run->run.id);
    run_names.push_back(run->run.name);
    thread_ranks = thread_ranks || run->facts.thread_ranks();
  }
  const double projected = s.projected_communicate.mean;
  const reports::AnswerLink own = answer.own_link(s);
  // The swept fields that make the configuration (its seed and tuning aside): the parallel
  // coordinates' axes and the scatters' x, from the runs the report grouped.
  json swept = s.config->runs.empty() ? json::object() : s.config->runs.front()->run.swept;
  for (const char* aside : {"seed", "tune", "repeat"}) swept.erase(aside);
  json out = {
      {"id", configuration_id(m, *s.config)},
      {"label", s.config->label},
      {"swept", swept},
      {"row", s.config->row},
      {"column", s.config->column},
      {"runs", runs},
      {"run_names", run_names},
      {"baseline", v.baseline},
      {"thread_ranks", thread_ranks},
      {"final", stats_json(s.final_metric)},
      {"compression", stats_json(s.compression)},
      {"bytes_sent", number_or_null(bytes_sent(s))},
      {"pareto", on_front},
      {"target", number_or_null(answer.target_of(s).value)},
      {"cost", number_or_null(v.cost)},
      {"cost_text", reports::cost_text(m.metric, v)},
      {"noise", v.noise},
      {"step",
       {{"compute", number_or_null(s.compute.mean)},
        {"compress", number_or_null(s.compress.mean)},
        {"wait", number_or_null(s.wait.mean)},
        {"communicate_measured", number_or_null(s.communicate.mean)},
        {"communicate_projected", number_or_null(projected)},
        {"measured", number_or_null(reports::measured_step(s))},
        {"projected", number_or_null(reports::projected_step(s))},
        {"compute_utilization", number_or_null(reports::compute_utilization(s))}}},
      {"time", time_json(answer.time_to_target(s, own))},
      {"link", own.name},
      {"versus", reports::comparison_text(answer.compare(s, own), answer.time_to_target(s, own))},
      {"scan", scan_json(answer, s)}};
  if (hardware != nullptr) out["scan_there"] = scan_json(answer, s, hardware);
  return out;
}

// The profile the runs name, if any: {name, origin} or {error} for one that cannot be read.
struct NamedHardware {
  std::optional<HardwareProfile> profile;
  json description = nullptr;
};

NamedHardware named_hardware(const reports::ExperimentModel& m) {
  NamedHardware named;
  try {
    named.profile = reports::experiment_hardware(m);
    if (named.profile) named.description = {{"name", named.profile->name}, {"origin", named.profile->origin}};
  } catch (const ConfigError& e) {
    named.description = {{"error", e.what()}};
  }
  return named;
}

// The lead as the HTML report shows it: {"text"} for a paragraph, {"items"} for a list.
json lead_blocks_json(const std::string& lead) {
  json out = json::array();
  for (const reports::LeadBlock& block : reports::lead_blocks(lead))
    out.push_back(block.items.empty() ? json{{"text", block.text}} : json{{"items", block.items}});
  return out;
}

json section_json(const reports::ExperimentModel& m, const reports::Section& section) {
  json tables = json::array();
  for (const reports::Table& t : section.tables) {
    json columns = json::array();
    for (const reports::Column& c : t.columns)
      columns.push_back({{"header", c.header}, {"right", c.align == reports::Align::Right}});
    json row_configurations = json::array(), row_runs = json::array();
    for (const reports::RowSubject& subject : t.subjects) {
      row_configurations.push_back(subject.configuration ? json(configuration_id(m, *subject.configuration))
                                                         : json(nullptr));
      row_runs.push_back(subject.run_id != 0 ? json(subject.run_id) : json(nullptr));
    }
    tables.push_back({{"title", t.title},
                      {"slug", t.slug},
                      {"columns", columns},
                      {"rows", t.rows},
                      {"row_configurations", row_configurations},
                      {"row_runs", row_runs},
                      {"csv_header", t.csv.header},
                      {"csv_rows", t.csv.rows}});
  }
  return {{"heading", section.heading}, {"anchor", reports::section_anchor(section)},
          {"lead", section.lead},       {"lead_blocks", lead_blocks_json(section.lead)},
          {"text", section.text},       {"tables", tables}};
}

}  // namespace

json experiment_json(storage::Database& db, const std::string& name, std::optional<double> target) {
  reports::TargetRule rule;
  rule.value = target;
  const auto model = reports::build_model(db, {name}, rule);
  const reports::ExperimentModel& m = *model;
  const std::vector<bool> front = pareto(m.summaries, m.metric);
  const NamedHardware named = named_hardware(m);
  const HardwareProfile* hardware = named.profile ? &*named.profile : nullptr;
  json configurations = json::array();
  for (std::size_t i = 0; i < m.summaries.size(); ++i)
    configurations.push_back(configuration_json(m, m.summaries[i], front[i], hardware));
  json bandwidths = json::array(), bandwidth_texts = json::array();
  for (const double rate : reports::scanned_bandwidths()) {
    bandwidths.push_back(rate);
    bandwidth_texts.push_back(reports::rate_text(rate));
  }
  json sections = json::array();
  for (const reports::Section& s : reports::report_of(m, {name}, {}, hardware, {advise::advice_section}).report.sections)
    sections.push_back(section_json(m, s));
  return {
      {"name", name},
      {"target", target ? json(*target) : json(nullptr)},
      {"metric", {{"key", m.metric.key}, {"label", m.metric.label}, {"higher_is_better", m.metric.higher_is_better}}},
      {"bandwidths", bandwidths},
      {"bandwidth_texts", bandwidth_texts},
      {"hardware", named.description},
      {"baseline", m.answer->baseline_source()},
      {"configurations", configurations},
      {"sections", sections}};
}

}  // namespace laconic::ui
