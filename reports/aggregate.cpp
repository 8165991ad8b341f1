#include "reports/aggregate.hpp"

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace laconic::reports {
namespace {

// `get`: a member of RunData, or a function of one.
template <class Get>
Stats over_runs(const Configuration& config, Get get) {
  std::vector<double> values;
  for (const RunData* run : config.runs) values.push_back(std::invoke(get, *run));
  return stats_of(values);
}

// The points (`points`: RunData::epochs or ::evaluations) of every run grouped by the key that
// `columns(run, point)` returns with the point's N values: per key, the values of each column.
template <std::size_t N, class Point, class Columns>
std::map<std::int64_t, std::array<std::vector<double>, N>> group_points(const Configuration& config,
                                                                        std::vector<Point> RunData::*points,
                                                                        Columns columns) {
  std::map<std::int64_t, std::array<std::vector<double>, N>> groups;
  for (const RunData* run : config.runs)
    for (const Point& point : (*run).*points) {
      const auto [key, values] = columns(*run, point);
      for (std::size_t c = 0; c < N; ++c) groups[key][c].push_back(values[c]);
    }
  return groups;
}

}  // namespace

Stats over_seeds(const Configuration& config, double (*get)(const RunData&)) {
  // A configuration's runs differ in their seed alone; repeats (runs.repetition) share theirs.
  std::map<std::int64_t, std::vector<double>> by_seed;
  for (const RunData* run : config.runs) by_seed[run->run.seed].push_back(get(*run));
  std::vector<double> means;
  for (const auto& [seed, values] : by_seed) means.push_back(stats_of(values).mean);
  return stats_of(means);
}

bool TestMetric::reaches(double value, double target) const {
  if (std::isnan(value)) return false;
  return higher_is_better ? value >= target : value <= target;
}

TestMetric test_metric_of(const ResolvedMetric& metric) {
  std::string label = metric.key;  // "test_accuracy" -> "test accuracy"
  std::replace(label.begin(), label.end(), '_', ' ');
  // Evaluated on another split (perldoc's validation split): "validation perplexity".
  if (metric.split != "test" && label.rfind("test ", 0) == 0) label = metric.split + label.substr(4);
  // An accuracy is a fraction (4 decimals); a perplexity or a loss is not.
  return {metric.key, label, metric.higher_is_better, metric.higher_is_better ? 4 : 2};
}

ConfigSummary summarize(const Configuration& config) {
  ConfigSummary out;
  out.config = &config;
  // Repeats of a seed train the same way: they add samples of time, not of accuracy.
  out.final_metric = over_seeds(config, [](const RunData& r) { return r.final_metric; });
  out.compression = over_runs(config, &RunData::compression_ratio);
  out.compute = over_runs(config, &RunData::compute);
  out.compress = over_runs(config, &RunData::compress);
  out.wait = over_runs(config, &RunData::wait);
  out.communicate = over_runs(config, &RunData::communicate);
  out.overlapped = over_runs(config, &RunData::overlapped);
  out.overlap_budget = over_runs(config, &RunData::overlap_budget);
  out.messages = over_runs(config, &RunData::messages);
  out.link_bytes = over_runs(config, &RunData::link_bytes);
  out.between_messages = over_runs(config, &RunData::between_messages);
  out.between_link_bytes = over_runs(config, &RunData::between_link_bytes);
  out.between_shared_bytes = over_runs(config, &RunData::between_shared_bytes);
  if (!config.runs.empty()) out.inside = traffic_of(*config.runs.front()).inside;
  out.step_median = over_runs(config, &RunData::step_median);
  out.step_q1 = over_runs(config, &RunData::step_q1).mean;
  out.step_q3 = over_runs(config, &RunData::step_q3).mean;
  out.projected_communicate = over_runs(config, &RunData::projected_communicate);

  const auto epochs = group_points<4>(config, &RunData::epochs, [](const RunData& run, const EpochPoint& e) {
    const double bits = 8 * e.payload_bytes / run.model_parameters;  // NaN without model_parameters
    return std::pair{e.epoch, std::array{e.test_metric, e.measured_time, e.projected_time, bits}};
  });
  for (const auto& [epoch, v] : epochs)
    out.epochs.push_back({epoch, stats_of(v[0]), stats_of(v[1]).mean, stats_of(v[2]).mean, stats_of(v[3]).mean});
  const auto steps = group_points<4>(config, &RunData::evaluations, [](const RunData& run, const EvalPoint& e) {
    const double per_epoch = static_cast<double>(run.steps_per_epoch);
    const double epochs_trained = per_epoch > 0 ? static_cast<double>(e.step) / per_epoch : kNaN;
    return std::pair{e.step, std::array{epochs_trained, e.test_metric, e.measured_time, e.projected_time}};
  });
  for (const auto& [step, v] : steps)
    out.evaluations.push_back({step, stats_of(v[0]).mean, stats_of(v[1]), stats_of(v[2]).mean, stats_of(v[3]).mean});
  return out;
}

double local_seconds(const ConfigSummary& s) {
  return or_zero(s.compute.mean) + or_zero(s.compress.mean) + or_zero(s.wait.mean);
}

double measured_step(const ConfigSummary& s) { return local_seconds(s) + or_zero(s.communicate.mean); }

RecordedTraffic traffic_of(const RunData& run) {
  RecordedTraffic t{run.messages, run.link_bytes, run.between_messages, run.between_link_bytes,
                    run.between_shared_bytes, std::nullopt};
  if (run.facts.resolved && run.facts.resolved->islands) t.inside = run.facts.resolved->islands->inside;
  return t;
}

RecordedTraffic traffic_of(const ConfigSummary& s) {
  return {s.messages.mean,           s.link_bytes.mean, s.between_messages.mean, s.between_link_bytes.mean,
          s.between_shared_bytes.mean, s.inside};
}

double communicate_on_link(const LinkSpec& link, const RecordedTraffic& t, double overlap_budget) {
  const double whole = t.on_islands() ? t.inside->project(t.messages - t.between_messages,
                                                          t.link_bytes - t.between_link_bytes) +
                                            link.project(t.between_messages, t.between_shared_bytes)
                                      : link.project(t.messages, t.link_bytes);
  return std::isnan(overlap_budget) ? whole : std::max(0.0, whole - overlap_budget);
}

double projected_step(const ConfigSummary& s) {
  return std::isnan(s.projected_communicate.mean) ? kNaN : local_seconds(s) + s.projected_communicate.mean;
}

double compute_utilization(const ConfigSummary& s) {
  const double projected = projected_step(s);
  return s.compute.mean / (std::isnan(projected) ? measured_step(s) : projected);
}

double step_on_link(const ConfigSummary& s, const LinkSpec& link) {
  if (std::isnan(s.messages.mean) || std::isnan(s.link_bytes.mean)) return kNaN;
  return local_seconds(s) + communicate_on_link(link, traffic_of(s), s.overlap_budget.mean);
}

std::string measured_word(const std::vector<ConfigSummary>& summaries, const std::string& for_threads) {
  std::size_t threads = 0;
  for (const ConfigSummary& s : summaries)
    for (const RunData* run : s.config->runs)
      if (run->facts.thread_ranks()) {
        ++threads;
        break;
      }
  if (threads == 0) return "measured";
  if (threads == summaries.size()) return for_threads;
  return str_cat("measured (thread ranks: ", for_threads, ")");
}

std::string thread_ranks_note(const std::vector<ConfigSummary>& summaries) {
  std::string names;
  for (const ConfigSummary& s : summaries)
    for (const RunData* run : s.config->runs)
      if (run->facts.thread_ranks()) {
        names += (names.empty() ? "" : ", ") + s.config->label;
        break;
      }
  if (names.empty()) return "";
  return str_cat(" Ranks as threads (placement = threads()): ", names,
                 ". Their compute and compress are each rank's thread's CPU time, their wait is derived (the "
                 "slowest rank's compute less the rank's own) and their communication, measured as well as "
                 "projected, is the projection of their messages onto the link: nothing of theirs was measured on "
                 "a wire (docs/network-model.md, \"Thread ranks\").");
}

}  // namespace laconic::reports
