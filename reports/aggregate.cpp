#include "reports/aggregate.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"

#include <cmath>
#include <map>
#include <string>

namespace laconic::reports {
namespace {

template <class Get>
Stats over_runs(const Configuration& config, Get get) {
  std::vector<double> values;
  for (const RunData* run : config.runs) values.push_back(get(*run));
  return stats_of(values);
}

}  // namespace

// A run's name without its ",repeat=K" part: what its repeats share (lua/sweep.cpp names them).
std::string name_of_seed(const std::string& name) {
  const auto at = name.rfind(",repeat=");
  return at == std::string::npos ? name : name.substr(0, at);
}

Stats over_seeds(const Configuration& config, double (*get)(const RunData&)) {
  std::map<std::string, std::vector<double>> by_seed;
  for (const RunData* run : config.runs) by_seed[name_of_seed(run->run.name)].push_back(get(*run));
  std::vector<double> means;
  for (const auto& [seed, values] : by_seed) means.push_back(stats_of(values).mean);
  return stats_of(means);
}

bool TestMetric::reaches(double value, double target) const {
  if (std::isnan(value)) return false;
  return higher_is_better ? value >= target : value <= target;
}

TestMetric test_metric_named(const std::string& key) {
  if (key == keys::kTestPerplexity) return {key, "test perplexity", false, 2};
  return {key, "test accuracy", true, 4};
}

ConfigSummary summarize(const Configuration& config) {
  ConfigSummary out;
  out.config = &config;
  // Repeats of a seed train the same way: they add samples of time, not of accuracy.
  out.final_metric = over_seeds(config, [](const RunData& r) { return r.final_metric; });
  out.compression = over_runs(config, [](const RunData& r) { return r.compression_ratio(); });
  out.compute = over_runs(config, [](const RunData& r) { return r.compute; });
  out.compress = over_runs(config, [](const RunData& r) { return r.compress; });
  out.wait = over_runs(config, [](const RunData& r) { return r.wait; });
  out.communicate = over_runs(config, [](const RunData& r) { return r.communicate; });
  out.overlapped = over_runs(config, [](const RunData& r) { return r.overlapped; });
  out.messages = over_runs(config, [](const RunData& r) { return r.messages; });
  out.link_bytes = over_runs(config, [](const RunData& r) { return r.link_bytes; });
  out.step_median = over_runs(config, [](const RunData& r) { return r.step_median; });
  out.step_q1 = over_runs(config, [](const RunData& r) { return r.step_q1; }).mean;
  out.step_q3 = over_runs(config, [](const RunData& r) { return r.step_q3; }).mean;
  out.projected_communicate = over_runs(config, [](const RunData& r) { return r.projected_communicate; });

  struct Values {
    std::vector<double> metric, measured, projected, bits;
  };
  std::map<std::int64_t, Values> epochs;
  for (const RunData* run : config.runs)
    for (const EpochPoint& e : run->epochs) {
      Values& v = epochs[e.epoch];
      v.metric.push_back(e.test_metric);
      v.measured.push_back(e.measured_time);
      v.projected.push_back(e.projected_time);
      v.bits.push_back(8 * e.payload_bytes / run->model_parameters);  // NaN without model_parameters
    }
  for (const auto& [epoch, v] : epochs)
    out.epochs.push_back(
        {epoch, stats_of(v.metric), stats_of(v.measured).mean, stats_of(v.projected).mean, stats_of(v.bits).mean});

  struct EvalValues {
    std::vector<double> epochs, metric, measured, projected;
  };
  std::map<std::int64_t, EvalValues> steps;
  for (const RunData* run : config.runs)
    for (const EvalPoint& e : run->evaluations) {
      EvalValues& v = steps[e.step];
      const double per_epoch = static_cast<double>(run->steps_per_epoch);
      v.epochs.push_back(per_epoch > 0 ? static_cast<double>(e.step) / per_epoch : kNaN);
      v.metric.push_back(e.test_metric);
      v.measured.push_back(e.measured_time);
      v.projected.push_back(e.projected_time);
    }
  for (const auto& [step, v] : steps)
    out.evaluations.push_back(
        {step, stats_of(v.epochs).mean, stats_of(v.metric), stats_of(v.measured).mean, stats_of(v.projected).mean});
  return out;
}

double local_seconds(const ConfigSummary& s) {
  return or_zero(s.compute.mean) + or_zero(s.compress.mean) + or_zero(s.wait.mean);
}

double measured_step(const ConfigSummary& s) { return local_seconds(s) + or_zero(s.communicate.mean); }

double step_on_link(const ConfigSummary& s, const LinkSpec& link) {
  if (std::isnan(s.messages.mean) || std::isnan(s.link_bytes.mean)) return kNaN;
  return local_seconds(s) + link.project(s.messages.mean, s.link_bytes.mean);
}

const ConfigSummary* row_dense(const Grid& grid, const std::vector<ConfigSummary>& summaries, const ConfigSummary& s) {
  const Configuration* dense = grid.find(s.config->row, "none");
  for (const ConfigSummary& other : summaries)
    if (dense != nullptr && other.config == dense) return &other;
  return nullptr;
}

std::string thread_ranks_note(const std::vector<ConfigSummary>& summaries) {
  std::string names;
  for (const ConfigSummary& s : summaries)
    for (const RunData* run : s.config->runs)
      if (run->thread_ranks) {
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
