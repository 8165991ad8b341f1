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
/// Compute differing from the baseline's by more than this share is the machine's doing, not
/// the method's (no compressor changes forward, backward or the optimizer).
constexpr double kDisturbedCompute = 0.10;
/// A host whose demand exceeds its cores by more than this share is called busy.
constexpr double kBusyHost = 1.10;
/// "About N more seeds" is searched up to this many seeds of each configuration.
constexpr std::size_t kMostSeeds = 100;

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

/// Seconds per step of `run` on `link`: its measured compute (or `compute` where that is not
/// NaN: the row's shared compute), compress and wait, and its messages projected onto the link
/// (its recorded projection on its own link where it recorded no messages), or its communication
/// as measured (AnswerLink::measured).
double step_of(const RunData& run, const AnswerLink& link, double compute) {
  if (link.hardware != nullptr) {
    const std::optional<LinkSpec>& spec = link.spec ? link.spec : run.run.link;
    return spec ? hardware_step(run, *link.hardware, *spec).total() : kNaN;
  }
  const double local =
      (std::isnan(compute) ? or_zero(run.compute) : compute) + or_zero(run.compress) + or_zero(run.wait);
  if (link.measured) return std::isnan(run.communicate) ? kNaN : local + run.communicate;
  const bool messages = !std::isnan(run.messages) && !std::isnan(run.link_bytes);
  if (link.spec && messages)
    return local + communicate_on_link(*link.spec, traffic_of(run), run.overlap_budget);
  if (link.own && !std::isnan(run.projected_communicate)) return local + run.projected_communicate;
  return kNaN;
}

std::vector<double> logs_of(const std::vector<double>& seconds) {
  std::vector<double> out;
  for (double s : seconds) out.push_back(std::log(s));
  return out;
}

/// The seeds of each side that would make the interval of the log ratio narrower than what
/// decides it (|d| for a direction, margin - |d| for "within noise"), less the seeds there are.
double seeds_to_decide(const Stats& a, const Stats& b, double d, double widening) {
  const double margin = std::log1p(kEquivalenceMargin);
  const double needed = std::max(std::fabs(d), margin - std::fabs(d)) - widening;
  const std::size_t have = std::max(a.n, b.n);
  if (!(needed > 0)) return kNaN;
  for (std::size_t n = have + 1; n <= kMostSeeds; ++n) {
    const double se = std::sqrt((a.std * a.std + b.std * b.std) / static_cast<double>(n));
    if (student_t975(static_cast<double>(2 * n - 2)) * se < needed) return static_cast<double>(n - have);
  }
  return kNaN;
}

/// The configuration whose compressor its runs record as their baseline (rule names none).
bool recorded_baseline(const ConfigSummary& s) { return s.config->runs.front()->run.is_baseline; }

}  // namespace

/// A configuration's runs on one link: the log of each run's time to target (of a run that never
/// reached it, the time to its last evaluation: a lower bound), and their mean step there.
struct Answer::Sample {
  std::vector<double> reached_seconds;  ///< runs that reached it
  std::vector<double> steps;            ///< their steps to the target
  std::vector<double> logs;             ///< every run with a time: log seconds, or a lower bound's
  std::size_t runs = 0;
  bool bounded = false;  ///< some entry of `logs` is a lower bound
  double step = kNaN;    ///< mean s per step on the link
};

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
    case Versus::Inconclusive:
      return "inconclusive";
    case Versus::NotReached:
      return "not reached";
    case Versus::Unknown:
      break;
  }
  return "unknown";
}

double default_tolerance(const TestMetric& metric) { return metric.higher_is_better ? 0.5 : 2.0; }

std::string tolerance_text(const TestMetric& metric, double tolerance) {
  char buf[48];
  if (metric.higher_is_better)
    std::snprintf(buf, sizeof buf, "%.2g point%s", tolerance, tolerance == 1 ? "" : "s");
  else
    std::snprintf(buf, sizeof buf, "%.2g%%", tolerance);
  return buf;
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

std::string latency_text(double seconds) {
  char number[32];
  if (seconds >= 1e-3)
    std::snprintf(number, sizeof number, "%.3g ms", seconds * 1e3);
  else
    std::snprintf(number, sizeof number, "%.3g us", seconds * 1e6);
  return number;
}

std::vector<double> scanned_bandwidths() {
  std::vector<double> out;
  const int points = static_cast<int>(std::lround(std::log10(kHighest / kLowest))) * kPerDecade;
  for (int i = 0; i <= points; ++i) out.push_back(kLowest * std::pow(10.0, static_cast<double>(i) / kPerDecade));
  return out;
}

std::string time_text(const TimeToTarget& t) {
  if (t.reached == 0 && t.runs > 0) return str_cat("not reached (0 of ", t.runs, " runs)");
  if (std::isnan(t.seconds)) return kMissing;
  const std::string time = seconds(t.seconds) + " s";
  if (!t.all_reached()) return str_cat(time, " (", t.reached, " of ", t.runs, " runs reached it)");
  if (std::isnan(t.low)) return time + " (one run: no interval)";
  return str_cat(time, " [", seconds(t.low), ", ", seconds(t.high), "]");
}

std::string comparison_text(const Comparison& c, const TimeToTarget& t) {
  switch (c.versus) {
    case Versus::Baseline:
      return "baseline";
    case Versus::NotReached:
      return str_cat("not reached (0 of ", t.runs, " runs)");
    case Versus::Unknown:
      return kMissing;
    default:
      break;
  }
  std::string detail = percent_text(c.change);
  if (!std::isnan(c.low)) detail += str_cat(" [", percent_text(c.low), ", ", percent_text(c.high), "]");
  if (c.versus == Versus::Inconclusive) {
    if (!c.why.empty()) detail += "; " + c.why;
    if (!std::isnan(c.more_seeds))
      detail += str_cat("; about ", std::lround(c.more_seeds), c.more_seeds == 1 ? " more seed" : " more seeds");
  }
  return str_cat(versus_word(c.versus), " (", detail, ")");
}

std::string cost_text(const TestMetric& metric, const Verdict& v) {
  if (std::isnan(v.cost)) return v.baseline ? "baseline" : kMissing;
  const auto amount = [&](double x) { return metric.higher_is_better ? fixed(x, 2) + " points" : fixed(x, 1) + "%"; };
  std::string out = str_cat(v.cost >= 0 ? "costs " : "gains ", amount(std::fabs(v.cost)));
  if (std::isnan(v.cost_half_width)) return out + " (no interval: one seed)";
  // The interval of what the words say: of the cost, or of the gain.
  const double sign = v.cost >= 0 ? 1 : -1;
  const int digits = metric.higher_is_better ? 2 : 1;
  return str_cat(out, " [", fixed(sign * v.cost - v.cost_half_width, digits), ", ",
                 fixed(sign * v.cost + v.cost_half_width, digits), "]");
}

Answer::Answer(const Grid& grid, const std::vector<ConfigSummary>& summaries, const TestMetric& metric,
               const TargetRule& rule)
    : summaries_(summaries), metric_(metric) {
  const auto is_rule_baseline = [&](const ConfigSummary& s) {
    return rule.baseline ? s.config->column == *rule.baseline : recorded_baseline(s);
  };
  if (rule.baseline) {
    std::string columns;
    for (const std::string& c : grid.columns) columns += (columns.empty() ? "'" : ", '") + c + "'";
    if (std::find(grid.columns.begin(), grid.columns.end(), *rule.baseline) == grid.columns.end())
      throw ConfigError(str_cat("--baseline '", *rule.baseline, "' is no configuration's compressor; the compared ",
                                "ones: ", columns.empty() ? std::string("none") : columns));
    baseline_source_ = str_cat(*rule.baseline, " (--baseline)");
  }
  const double tolerance = rule.tolerance.value_or(default_tolerance(metric));
  for (const std::string& row : grid.rows) {
    RowTarget target{row, kNaN, nullptr, ""};
    const ConfigSummary* best_any = nullptr;
    for (const ConfigSummary& s : summaries) {
      if (s.config->row != row) continue;
      if (is_rule_baseline(s)) target.baseline = &s;
      if (!std::isnan(s.final_metric.mean) &&
          (!best_any || metric.better(s.final_metric.mean, best_any->final_metric.mean)))
        best_any = &s;
    }
    if (!rule.baseline && target.baseline && baseline_source_.empty())
      baseline_source_ = str_cat(
          target.baseline->config->column, " (the runs' configuration: baseline = ", target.baseline->config->column,
          target.baseline->config->runs.front()->run.baseline_named ? std::string(")") : std::string(", the default)"));
    const ConfigSummary* from =
        target.baseline && !std::isnan(target.baseline->final_metric.mean) ? target.baseline : best_any;
    if (rule.value) {
      target.value = *rule.value;
      target.source = "--target";
    } else if (from) {
      const double best = from->final_metric.mean;
      target.value = metric.higher_is_better ? best - tolerance / 100 : best * (1 + tolerance / 100);
      target.source = str_cat(from == target.baseline ? "" : "no baseline in this row; the best configuration, ",
                              from->config->column, " reached ", fixed(best, metric.digits), " on average, ",
                              metric.higher_is_better ? "less " : "plus ", tolerance_text(metric, tolerance));
    }
    targets_.push_back(std::move(target));
  }
  for (const ConfigSummary& s : summaries) {
    Verdict v;
    v.summary = &s;
    v.target = &target_of(s);
    v.baseline = v.target->baseline == &s;
    const ConfigSummary* base = v.target->baseline;
    if (base && base != &s) {
      const double a = s.final_metric.mean, b = base->final_metric.mean;
      const double scale = metric.higher_is_better ? 100 : 100 / b;
      v.cost = (metric.higher_is_better ? b - a : a - b) * scale;
      v.cost_half_width = welch_ci95_half_width(s.final_metric, base->final_metric) * scale;
      const double compute = s.compute.mean, base_compute = base->compute.mean;
      if (base_compute > 0 && std::fabs(compute - base_compute) > kDisturbedCompute * base_compute) {
        v.disturbance += std::fabs(compute - base_compute);
        v.compute_disturbance = std::fabs(compute - base_compute);
        v.noise.push_back(str_cat("compute ", percent_text((compute - base_compute) / base_compute),
                                  " against the baseline, which no compressor changes"));
      }
    }
    double load = kNaN;
    for (const RunData* run : s.config->runs)
      if (!std::isnan(run->facts.host_load)) load = std::isnan(load) ? run->facts.host_load : std::max(load, run->facts.host_load);
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
  const ReportRun& run = s.config->runs.front()->run;
  return {run.network.empty() ? "the runs' link" : run.network, run.link, true};
}

AnswerLink Answer::measured_link() {
  AnswerLink link;
  link.name = "as measured";
  link.measured = true;
  return link;
}

AnswerLink Answer::scanned_link(const ConfigSummary& s, double bits_per_second, const HardwareProfile* hardware) const {
  LinkSpec spec = s.config->runs.front()->run.link.value_or(LinkSpec{});
  spec.bits_per_second = bits_per_second;
  spec.text = str_cat(rate_text(bits_per_second), ", ", latency_text(spec.latency_seconds));
  return {spec.text, spec, false, hardware};
}

Answer::Sample Answer::sample(const ConfigSummary& s, const AnswerLink& link) const {
  Sample out;
  out.runs = s.config->runs.size();
  const double target = target_of(s).value;
  if (std::isnan(target)) return out;
  const double compute = link.shared_compute ? shared_compute(s) : kNaN;
  std::vector<double> steps_on_link;
  for (const RunData* run : s.config->runs) {
    const double step = step_of(*run, link, compute);
    steps_on_link.push_back(step);
    const double st = steps_to_target(*run, metric_, target);
    if (!std::isnan(st)) out.steps.push_back(st);
    if (!(step > 0)) continue;
    if (!std::isnan(st)) {
      out.reached_seconds.push_back(st * step);
      out.logs.push_back(std::log(st * step));
    } else if (!run->evaluations.empty() && run->evaluations.back().step > 0) {
      out.logs.push_back(std::log(static_cast<double>(run->evaluations.back().step) * step));
      out.bounded = true;
    }
  }
  out.step = stats_of(steps_on_link).mean;
  return out;
}

double Answer::disturbance(const ConfigSummary& s, const AnswerLink& link) const {
  const Verdict& v = verdict(s);
  return link.shared_compute ? v.disturbance - v.compute_disturbance : v.disturbance;
}

double Answer::step(const ConfigSummary& s, const AnswerLink& link) const {
  const double compute = link.shared_compute ? shared_compute(s) : kNaN;
  std::vector<double> steps;
  for (const RunData* run : s.config->runs) steps.push_back(step_of(*run, link, compute));
  return stats_of(steps).mean;
}

double Answer::shared_compute(const ConfigSummary& s) const {
  std::vector<double> computes;
  for (const ConfigSummary& other : summaries_)
    if (other.config->row == s.config->row)
      for (const RunData* run : other.config->runs)
        if (!std::isnan(run->compute)) computes.push_back(run->compute);
  return stats_of(computes).mean;
}

TimeToTarget Answer::time_to_target(const ConfigSummary& s, const AnswerLink& link) const {
  const Sample sample = this->sample(s, link);
  TimeToTarget t;
  t.runs = sample.runs;
  t.reached = sample.steps.size();
  t.steps = stats_of(sample.steps).mean;
  const Stats logs = stats_of(logs_of(sample.reached_seconds));
  if (logs.n == 0) return t;
  t.seconds = std::exp(logs.mean);
  if (logs.n < 2) return t;
  // Other hardware's profile has none of this machine's disturbances.
  const double widening = link.hardware ? 0.0 : std::log1p(disturbance(s, link) / sample.step);
  const double half = ci95_half_width(logs) + widening;
  t.low = std::exp(logs.mean - half);
  t.high = std::exp(logs.mean + half);
  return t;
}

Comparison Answer::compare(const ConfigSummary& s, const AnswerLink& link) const {
  const ConfigSummary* base = target_of(s).baseline;
  const Sample mine = sample(s, link);
  const auto only = [](Versus v) {
    Comparison c;
    c.versus = v;
    return c;
  };
  if (base == &s) return only(std::isnan(mine.step) ? Versus::Unknown : Versus::Baseline);
  if (mine.runs > 0 && mine.steps.empty()) return only(Versus::NotReached);
  if (base == nullptr || mine.reached_seconds.empty()) return {};
  const Sample theirs = sample(*base, link);
  if (theirs.reached_seconds.empty()) return {};
  Comparison c;
  c.change =
      std::exp(stats_of(logs_of(mine.reached_seconds)).mean - stats_of(logs_of(theirs.reached_seconds)).mean) - 1;
  const Stats a = stats_of(mine.logs), b = stats_of(theirs.logs);
  c.versus = Versus::Inconclusive;
  c.bounded = mine.bounded || theirs.bounded;
  if (a.n < 2 || b.n < 2) {
    c.why = str_cat("one run of ", (a.n < 2 ? s : *base).config->label, ": no interval");
    return c;
  }
  const bool disturbed_here = link.hardware == nullptr;
  const double widening =
      disturbed_here ? std::log1p(disturbance(s, link) / mine.step) + std::log1p(disturbance(*base, link) / theirs.step)
                     : 0.0;
  const double d = a.mean - b.mean;
  const double half = or_zero(welch_ci95_half_width(a, b)) + widening;
  c.low = std::exp(d - half) - 1;
  c.high = std::exp(d + half) - 1;
  // A lower bound in `mine` can only make the true ratio larger, one in `theirs` smaller.
  if (!mine.bounded && d + half < 0) c.versus = Versus::Faster;
  if (!theirs.bounded && d - half > 0) c.versus = Versus::Slower;
  if (c.versus != Versus::Inconclusive) return c;
  if (c.bounded) {
    const Sample& partial = mine.bounded ? mine : theirs;
    c.why = str_cat(partial.steps.size(), " of ", partial.runs, " runs of ", (mine.bounded ? s : *base).config->label,
                    " reached the target");
    return c;
  }
  const double margin = std::log1p(kEquivalenceMargin);
  if (d - half >= -margin && d + half <= margin) {
    c.versus = Versus::WithinNoise;
    return c;
  }
  c.more_seeds = seeds_to_decide(a, b, d, widening);
  if (std::isnan(c.more_seeds)) c.why = "more seeds would not decide it on this machine's noise";
  return c;
}

BandwidthScan Answer::scan(const ConfigSummary& s, const HardwareProfile* hardware, bool shared_compute) const {
  BandwidthScan out;
  const std::vector<double> rates = scanned_bandwidths();
  for (double rate : rates) {
    AnswerLink link = scanned_link(s, rate, hardware);
    link.shared_compute = shared_compute;
    const Comparison c = compare(s, link);
    out.versus.push_back(c.versus);
    if (c.versus == Versus::Faster) out.break_even = rate;
    if (c.change < 0 && !c.bounded) out.crossover = rate;
  }
  const Versus first = out.versus.front();
  if (first == Versus::Baseline) {
    out.text = "(baseline)";
    return out;
  }
  if (first == Versus::NotReached) {
    out.text = time_text(time_to_target(s, own_link(s)));
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
  if (segments.size() == 1)
    out.text = first == Versus::Unknown ? std::string(kMissing)
                                        : str_cat(versus_word(first), " at every bandwidth from ", rate_text(kLowest),
                                                  " to ", rate_text(kHighest));
  for (std::size_t k = 0; k < segments.size() && segments.size() > 1; ++k) {
    const Segment& g = segments[k];
    std::string part = versus_word(g.versus);
    if (k == 0)
      part += " up to " + rate_text(rates[g.to]);
    else if (k + 1 == segments.size())
      part += " from " + rate_text(rates[g.from]);
    else if (g.from == g.to)
      part += " at " + rate_text(rates[g.from]);
    else
      part += str_cat(" from ", rate_text(rates[g.from]), " to ", rate_text(rates[g.to]));
    out.text += (out.text.empty() ? "" : "; ") + part;
  }
  if (!std::isnan(out.crossover) && out.crossover != out.break_even)
    out.text += str_cat("; point estimates: faster up to ", rate_text(out.crossover));
  return out;
}

std::string noise_text(const std::vector<const Verdict*>& verdicts) {
  std::string out;
  for (const Verdict* v : verdicts) {
    if (v->noise.empty()) continue;
    out += str_cat(out.empty() ? "" : ". ", v->summary->config->label, ": ");
    for (std::size_t i = 0; i < v->noise.size(); ++i) out += (i ? "; " : "") + v->noise[i];
  }
  return out;
}

}  // namespace laconic::reports
