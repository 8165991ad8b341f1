#include "reports/answer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/error.hpp"
#include "reports/format.hpp"
#include "reports/hardware_step.hpp"

namespace laconic::reports {
namespace {

constexpr double kLowest = 1e7, kHighest = 1e11;  // bit/s
constexpr int kPerDecade = 10;
constexpr double kScanLatency = 50e-6;  // s per message: link's default
/// Compute differing from dense by more than this share is the machine's doing, not the
/// method's (no compressor changes forward, backward or the optimizer).
constexpr double kDisturbedCompute = 0.10;
/// A host whose demand exceeds its cores by more than this share is called busy.
constexpr double kBusyHost = 1.10;

std::string percent_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.0f%%", 100 * share);
  return buf;
}

/// The step at which `run` first reached `target` (steps taken); NaN if it never did.
double steps_to_target(const RunData& run, const TestMetric& metric, double target) {
  for (const EvalPoint& e : run.evaluations)
    if (metric.reaches(e.test_metric, target)) return static_cast<double>(e.step);
  return kNaN;
}

/// Seconds per step of `run` on `link`: its measured compute, compress and wait, and its
/// communication as projected (recorded for its own link, from its messages for another).
double step_of(const RunData& run, const AnswerLink& link) {
  if (link.hardware != nullptr) {
    const std::optional<LinkSpec>& spec = link.spec ? link.spec : run.run.link;
    return spec ? hardware_step(run, *link.hardware, *spec).total() : kNaN;
  }
  const double local = or_zero(run.compute) + or_zero(run.compress) + or_zero(run.wait);
  if (!link.spec) return std::isnan(run.projected_communicate) ? kNaN : local + run.projected_communicate;
  if (std::isnan(run.messages) || std::isnan(run.link_bytes)) return kNaN;
  return local + link.spec->project(run.messages, run.link_bytes);
}

bool better(const TestMetric& metric, double a, double b) {
  return std::isnan(b) || (metric.higher_is_better ? a > b : a < b);
}

const char* versus_word(Versus v) {
  switch (v) {
    case Versus::Baseline:
      return "baseline";
    case Versus::Faster:
      return "faster";
    case Versus::Slower:
      return "slower";
    case Versus::WithinNoise:
      return "within noise";
    case Versus::NotReached:
      return "not reached";
    case Versus::Unknown:
      break;
  }
  return "unknown";
}

}  // namespace

double default_tolerance(const TestMetric& metric) { return metric.higher_is_better ? 0.5 : 2.0; }

std::string tolerance_text(const TestMetric& metric, double tolerance) {
  char buf[48];
  if (metric.higher_is_better)
    std::snprintf(buf, sizeof buf, "%.2g point%s", tolerance, tolerance == 1 ? "" : "s");
  else
    std::snprintf(buf, sizeof buf, "%.2g%%", tolerance);
  return buf;
}

bool is_dense(const ConfigSummary& s) {
  const std::string& compressor = s.config->runs.front()->run.compressor;
  return compressor == "none" || compressor == "fp16";
}

std::string rate_text(double bits_per_second) {
  const char* units[] = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
  int u = 0;
  while (bits_per_second >= 1000 && u < 4) {
    bits_per_second /= 1000;
    ++u;
  }
  char number[32];
  std::snprintf(number, sizeof number, "%.3g", bits_per_second);
  return str_cat(number, " ", units[u]);
}

AnswerLink scanned_link(double bits_per_second, const HardwareProfile* hardware) {
  LinkSpec spec;
  spec.bits_per_second = bits_per_second;
  spec.latency_seconds = kScanLatency;
  return {rate_text(bits_per_second), spec, hardware};
}

std::vector<double> scanned_bandwidths() {
  std::vector<double> out;
  const int points = static_cast<int>(std::lround(std::log10(kHighest / kLowest))) * kPerDecade;
  for (int i = 0; i <= points; ++i) out.push_back(kLowest * std::pow(10.0, static_cast<double>(i) / kPerDecade));
  return out;
}

std::string comparison_text(const Comparison& c, const TimeToTarget& t) {
  switch (c.versus) {
    case Versus::Baseline:
      return "baseline";
    case Versus::NotReached:
      return str_cat("not reached (", t.reached, "/", t.runs, " runs)");
    case Versus::Unknown:
      return kMissing;
    default:
      return str_cat(versus_word(c.versus), " (", percent_text(c.change), ")");
  }
}

std::string cost_text(const TestMetric& metric, const Verdict& v) {
  if (std::isnan(v.cost)) return v.target && v.target->baseline == v.summary ? "baseline" : kMissing;
  const auto amount = [&](double x) { return metric.higher_is_better ? fixed(x, 2) + " points" : fixed(x, 1) + "%"; };
  std::string out = str_cat(v.cost >= 0 ? "costs " : "gains ", amount(std::fabs(v.cost)));
  if (std::isnan(v.cost_half_width)) return out + " (no interval: one seed)";
  return str_cat(out, " [", fixed(v.cost - v.cost_half_width, metric.higher_is_better ? 2 : 1), ", ",
                 fixed(v.cost + v.cost_half_width, metric.higher_is_better ? 2 : 1), "]");
}

Answer::Answer(const Grid& grid, const std::vector<ConfigSummary>& summaries, const TestMetric& metric,
               const TargetRule& rule)
    : grid_(grid), summaries_(summaries), metric_(metric) {
  const double tolerance = rule.tolerance.value_or(default_tolerance(metric));
  for (const std::string& row : grid.rows) {
    RowTarget target{row, kNaN, nullptr, ""};
    const ConfigSummary* best_any = nullptr;
    for (const ConfigSummary& s : summaries) {
      if (s.config->row != row || std::isnan(s.final_metric.mean)) continue;
      if (is_dense(s) && (!target.baseline || better(metric, s.final_metric.mean, target.baseline->final_metric.mean)))
        target.baseline = &s;
      if (!best_any || better(metric, s.final_metric.mean, best_any->final_metric.mean)) best_any = &s;
    }
    const ConfigSummary* from = target.baseline ? target.baseline : best_any;
    if (rule.value) {
      target.value = *rule.value;
      target.source = "--target";
    } else if (from) {
      const double best = from->final_metric.mean;
      target.value = metric.higher_is_better ? best - tolerance / 100 : best * (1 + tolerance / 100);
      target.source = str_cat(target.baseline ? "" : "no dense configuration in this row; the best one, ",
                              from->config->column, " reached ", fixed(best, metric.digits), " on average, ",
                              metric.higher_is_better ? "less " : "plus ", tolerance_text(metric, tolerance));
    }
    targets_.push_back(std::move(target));
  }
  for (const ConfigSummary& s : summaries) {
    Verdict v;
    v.summary = &s;
    v.target = &target_of(s);
    v.dense = is_dense(s);
    const ConfigSummary* base = v.target->baseline;
    if (base && base != &s) {
      const double a = s.final_metric.mean, b = base->final_metric.mean;
      const double scale = metric.higher_is_better ? 100 : 100 / b;
      v.cost = (metric.higher_is_better ? b - a : a - b) * scale;
      v.cost_half_width = welch_ci95_half_width(s.final_metric, base->final_metric) * scale;
      const double compute = s.compute.mean, dense_compute = base->compute.mean;
      if (dense_compute > 0 && std::fabs(compute - dense_compute) > kDisturbedCompute * dense_compute) {
        v.disturbance += std::fabs(compute - dense_compute);
        v.noise.push_back(str_cat("compute ", percent_text((compute - dense_compute) / dense_compute),
                                  " against dense, which no compressor changes"));
      }
    }
    double load = kNaN;
    for (const RunData* run : s.config->runs)
      if (!std::isnan(run->host_load)) load = std::isnan(load) ? run->host_load : std::max(load, run->host_load);
    if (load > kBusyHost) {
      v.disturbance += local_seconds(s) * (load - 1);
      char times[32];
      std::snprintf(times, sizeof times, "x%.2f", load);
      v.noise.push_back(str_cat("host busier than its cores (", times, ")"));
    }
    verdicts_.push_back(std::move(v));
  }
}

const RowTarget& Answer::target_of(const ConfigSummary& s) const {
  for (const RowTarget& t : targets_)
    if (t.row == s.config->row) return t;
  throw InvariantError(str_cat("no target for row '", s.config->row, "'"));
}

const Verdict& Answer::verdict(const ConfigSummary& s) const {
  return verdicts_.at(static_cast<std::size_t>(&s - summaries_.data()));
}

bool Answer::one_target() const {
  for (const RowTarget& t : targets_)
    if (t.value != targets_.front().value) return false;
  return true;
}

AnswerLink Answer::own_link(const ConfigSummary& s) const {
  const std::string& network = s.config->runs.front()->run.network;
  return {network.empty() ? "the runs' link" : network, std::nullopt};
}

TimeToTarget Answer::time_to_target(const ConfigSummary& s, const AnswerLink& link) const {
  TimeToTarget t;
  t.runs = s.config->runs.size();
  const double target = target_of(s).value;
  if (std::isnan(target)) return t;
  std::vector<double> steps, seconds;
  const RunData* single = nullptr;
  for (const RunData* run : s.config->runs) {
    const double st = steps_to_target(*run, metric_, target);
    if (std::isnan(st)) continue;
    ++t.reached;
    steps.push_back(st);
    seconds.push_back(st * step_of(*run, link));
    single = run;
  }
  if (steps.empty()) return t;
  t.steps = stats_of(steps).mean;
  const Stats time = stats_of(seconds);
  if (time.n == 0) return t;
  t.seconds = time.mean;
  // One run has no spread over runs: its steps' own spread stands in for it.
  const double scale = link.hardware != nullptr ? step_of(*single, link) / single->step_median : 1.0;
  const double spread =
      time.n >= 2 ? ci95_half_width(time) : t.steps * or_zero((single->step_q3 - single->step_q1) / 2 * scale);
  t.half_width = spread + (link.hardware != nullptr ? 0.0 : t.steps * verdict(s).disturbance);
  return t;
}

const ConfigSummary* Answer::fastest_dense(const ConfigSummary& s, const AnswerLink& link, TimeToTarget* time) const {
  const ConfigSummary* fastest = nullptr;
  for (const ConfigSummary& other : summaries_) {
    if (other.config->row != s.config->row || !is_dense(other)) continue;
    const TimeToTarget t = time_to_target(other, link);
    if (std::isnan(t.seconds) || (fastest && t.seconds >= time->seconds)) continue;
    fastest = &other;
    *time = t;
  }
  return fastest;
}

Comparison Answer::compare(const ConfigSummary& s, const AnswerLink& link) const {
  const TimeToTarget mine = time_to_target(s, link);
  // A dense configuration without a time there (its runs recorded no messages) is no baseline.
  if (is_dense(s)) return {std::isnan(mine.seconds) && mine.reached > 0 ? Versus::Unknown : Versus::Baseline, kNaN};
  if (!mine.all_reached()) return {Versus::NotReached, kNaN};
  TimeToTarget dense;
  if (!fastest_dense(s, link, &dense) || std::isnan(mine.seconds) || !(dense.seconds > 0)) return {};
  const double change = (mine.seconds - dense.seconds) / dense.seconds;
  const bool overlap = mine.seconds - mine.half_width <= dense.seconds + dense.half_width &&
                       dense.seconds - dense.half_width <= mine.seconds + mine.half_width;
  if (overlap) return {Versus::WithinNoise, change};
  return {mine.seconds < dense.seconds ? Versus::Faster : Versus::Slower, change};
}

BandwidthScan Answer::scan(const ConfigSummary& s, const HardwareProfile* hardware) const {
  BandwidthScan out;
  const std::vector<double> rates = scanned_bandwidths();
  for (double rate : rates) {
    out.versus.push_back(compare(s, scanned_link(rate, hardware)).versus);
    if (out.versus.back() == Versus::Faster) out.break_even = rate;
  }
  const Versus first = out.versus.front();
  if (first == Versus::Baseline) {
    out.text = "(dense)";
    return out;
  }
  if (first == Versus::NotReached) {
    const TimeToTarget t = time_to_target(s, own_link(s));
    out.text = str_cat("not reached (", t.reached, "/", t.runs, " runs)");
    return out;
  }
  // Runs of equal verdicts, lowest bandwidth first.
  struct Segment {
    Versus versus;
    std::size_t from, to;
  };
  std::vector<Segment> segments;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (segments.empty() || segments.back().versus != out.versus[i])
      segments.push_back({out.versus[i], i, i});
    else
      segments.back().to = i;
  }
  if (segments.size() == 1) {
    out.text = first == Versus::Unknown ? std::string(kMissing)
                                        : str_cat(versus_word(first), " at every bandwidth from ", rate_text(kLowest),
                                                  " to ", rate_text(kHighest));
    return out;
  }
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const Segment& g = segments[k];
    std::string part = versus_word(g.versus);
    if (k == 0)
      part += " up to " + rate_text(rates[g.to]);
    else if (k + 1 == segments.size())
      part += " from " + rate_text(rates[g.from]);
    else
      part += str_cat(" from ", rate_text(rates[g.from]), " to ", rate_text(rates[g.to]));
    out.text += (out.text.empty() ? "" : "; ") + part;
  }
  return out;
}

}  // namespace laconic::reports
