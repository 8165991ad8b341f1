// Tuned experiments (tune = { trials, metric, goal }): what the tuning chose for each
// configuration, and how the chosen hyperparameters did on every seed.
#include <algorithm>
#include <map>
#include <set>

#include "engine/core/run_config.hpp"
#include "reports/configurations.hpp"
#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

using Keys = std::vector<std::string>;

std::string value_of(const RunData& run, const std::string& key) {
  return run.run.swept.contains(key) ? value_text(run.run.swept[key]) : "";
}

std::string tuple_of(const RunData& run, const Keys& keys) {
  std::string out;
  for (const auto& key : keys) out += key + "=" + value_of(run, key) + "\x1f";
  return out;
}

// True when the `from` tuple determines the `to` tuple over `runs`.
bool determines(const std::vector<RunData>& runs, const Keys& from, const Keys& to) {
  std::map<std::string, std::string> seen;
  for (const auto& run : runs) {
    const auto [it, added] = seen.emplace(tuple_of(run, from), tuple_of(run, to));
    if (!added && it->second != tuple_of(run, to)) return false;
  }
  return true;
}

std::set<std::string> distinct(const std::vector<RunData>& runs, const Keys& keys) {
  std::set<std::string> out;
  for (const auto& run : runs) out.insert(tuple_of(run, keys));
  return out;
}

std::string assignment(const RunData& run, const Keys& keys) {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "" : ", ") + key + "=" + value_of(run, key);
  return out;
}

}  // namespace

// The trials are the configurations crossed with one paired axis of drawn samples, and the best
// runs hold one sample per configuration. So: split the swept keys into axes (keys that
// determine each other over the trials), and take the axis that the other keys determine in the
// best runs while every configuration of the trials has a best run (docs/reports.md).
Keys infer_tuned_keys(const std::vector<RunData>& trials, const std::vector<RunData>& best) {
  if (trials.empty() || best.empty()) return {};
  std::set<std::string> all;
  for (const auto& run : trials)
    for (const auto& [key, value] : run.run.swept.items())
      if (key != kSeedVariable && key != "tune") all.insert(key);
  std::vector<Keys> axes;
  for (const auto& key : all) {
    auto axis = std::find_if(axes.begin(), axes.end(), [&](const Keys& a) {
      return determines(trials, {a.front()}, {key}) && determines(trials, {key}, {a.front()});
    });
    if (axis == axes.end())
      axes.push_back({key});
    else
      axis->push_back(key);
  }
  // Draws from uniform / log_uniform / int are numbers in every trial; with two axes that fit
  // equally well (as many samples as configurations), the numeric one is the drawn one.
  const auto numeric = [&trials](const Keys& axis) {
    for (const auto& run : trials)
      for (const auto& key : axis)
        if (!run.run.swept.contains(key) || !run.run.swept[key].is_number()) return false;
    return true;
  };
  const Keys* chosen = nullptr;
  std::pair<bool, std::size_t> chosen_rank{false, 0};
  for (const Keys& axis : axes) {
    Keys rest;
    for (const auto& key : all)
      if (std::find(axis.begin(), axis.end(), key) == axis.end()) rest.push_back(key);
    const std::size_t values = distinct(trials, axis).size();
    if (values < 2 || !determines(best, rest, axis) || distinct(best, rest) != distinct(trials, rest)) continue;
    const std::pair<bool, std::size_t> rank{numeric(axis), values};
    if (chosen == nullptr || rank > chosen_rank) {
      chosen = &axis;
      chosen_rank = rank;
    }
  }
  return chosen ? *chosen : Keys{};
}

Section tuning_section(const std::vector<RunData>& trials, const std::vector<RunData>& best, const Keys& tuned_keys,
                       const TestMetric& metric) {
  Section section{
      "Tuning",
      str_cat("tune = { ... }: each configuration's random-search trials ran on the first seed (tune=trial), "
              "then its best trial on every seed (tune=best). Chosen = the hyperparameters of its "
              "tune=best runs; chosen trial = that trial's final ",
              metric.label,
              "; median trial = the median over its FINISHED trials (an untuned pick "
              "does about this well); best on all seeds = mean ± std of the tune=best runs. "
              "The sections above show the tune=best runs only."),
      {},
      {}};
  if (tuned_keys.empty()) {
    section.text +=
        " The report could not tell the tuned hyperparameters from the grid's variables (no tune=best "
        "runs yet, or too few trials), so there is no table.";
    return section;
  }
  const std::set<std::string> tuned(tuned_keys.begin(), tuned_keys.end());
  Keys rest;
  for (const auto& run : trials)
    for (const auto& [key, value] : run.run.swept.items())
      if (key != kSeedVariable && key != "tune" && !tuned.count(key) && std::find(rest.begin(), rest.end(), key) == rest.end())
        rest.push_back(key);
  std::sort(rest.begin(), rest.end());

  Table table;
  table.slug = "tuning";
  table.columns = {{"configuration"},
                   {"chosen"},
                   {"trials", Align::Right},
                   {"chosen trial", Align::Right},
                   {"median trial", Align::Right},
                   {"best on all seeds", Align::Right}};
  table.csv.header = {"configuration", "chosen",    "trials",   "chosen_trial",
                      "median_trial",  "best_mean", "best_std", "best_n"};
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunData*>> best_of, trials_of;
  for (const auto& run : best) {
    const std::string key = tuple_of(run, rest);
    if (!best_of.count(key)) order.push_back(key);
    best_of[key].push_back(&run);
  }
  for (const auto& run : trials) trials_of[tuple_of(run, rest)].push_back(&run);
  for (const auto& key : order) {
    const RunData& first = *best_of[key].front();
    const auto [row, column] = cell_of(first.run, tuned);
    const std::string chosen = tuple_of(first, tuned_keys);
    std::vector<double> trial_metrics, best_metrics;
    double chosen_metric = kNaN;
    for (const RunData* t : trials_of[key]) {
      trial_metrics.push_back(t->final_metric);
      if (tuple_of(*t, tuned_keys) == chosen) chosen_metric = t->final_metric;
    }
    for (const RunData* b : best_of[key]) best_metrics.push_back(b->final_metric);
    const Stats s = stats_of(best_metrics);
    const double median = median_of(trial_metrics);
    table.add_row(
        {row + " / " + column, assignment(first, tuned_keys), std::to_string(trial_metrics.size()),
         fixed(chosen_metric, metric.digits), fixed(median, metric.digits), mean_std_text(s, metric.digits)},
        {row + " / " + column, assignment(first, tuned_keys), std::to_string(trial_metrics.size()),
         raw_number(chosen_metric), raw_number(median), raw_number(s.mean), raw_number(s.std), std::to_string(s.n)});
  }
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
