// The report's first section: the answer in a few sentences and one small table, for the runs'
// own link and every --link (reports/answer.hpp computes it; this only words it).
#include <cmath>

#include "reports/curve_time.hpp"
#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

/// `s`'s mean metric at `steps` steps, interpolated between its evaluations; NaN before its first
/// and past its last.
double metric_at_steps(const ConfigSummary& s, double steps) {
  const EvalSummary* before = nullptr;
  for (const EvalSummary& e : s.evaluations) {
    if (static_cast<double>(e.step) >= steps) {
      if (before == nullptr) return static_cast<double>(e.step) <= steps * (1 + 1e-9) ? e.metric.mean : kNaN;
      const double f = (steps - static_cast<double>(before->step)) / static_cast<double>(e.step - before->step);
      return before->metric.mean + f * (e.metric.mean - before->metric.mean);
    }
    before = &e;
  }
  // At its last evaluation, give or take the rounding of the steps from seconds.
  if (before != nullptr && steps <= static_cast<double>(before->step) * (1 + 1e-9)) return before->metric.mean;
  return kNaN;
}

/// Where a configuration that ran out of steps stood at its runs' end against the baseline at the
/// same projected time on `link`: "at 3.1 s, its runs' end, test accuracy 0.8340 against none's
/// 0.8012 at the same projected time"; "" where either has no step or evaluations.
std::string standing_text(const Answer& answer, const ConfigSummary& s, const ConfigSummary& base,
                          const AnswerLink& link) {
  if (s.evaluations.empty()) return "";
  const double step = answer.step(s, link), base_step = answer.step(base, link);
  if (!(step > 0) || !(base_step > 0)) return "";
  const EvalSummary& last = s.evaluations.back();
  const double at = static_cast<double>(last.step) * step;
  const double theirs = metric_at_steps(base, at / base_step);
  const TestMetric& metric = answer.metric();
  const std::string mine = str_cat("at ", seconds(at), " s, its runs' end, ", metric.label, " ",
                                   fixed(last.metric.mean, metric.digits), " against ", base.config->label, "'s ");
  if (std::isnan(theirs) && !base.evaluations.empty() &&
      at / base_step < static_cast<double>(base.evaluations.front().step))
    return str_cat(mine, "first evaluation only later, at ", seconds(static_cast<double>(base.evaluations.front().step) * base_step),
                   " s (", fixed(base.evaluations.front().metric.mean, metric.digits), ")");
  if (std::isnan(theirs))
    return str_cat(mine, fixed(base.evaluations.back().metric.mean, metric.digits), " at its own end, sooner");
  return str_cat(mine, fixed(theirs, metric.digits), " at the same projected time");
}

/// What the row's runs say on one link: the fastest configuration that beats the baseline beyond
/// the noise, the baseline's own time, and every other configuration's verdict against it.
std::string on_link(const Answer& answer, const std::vector<const ConfigSummary*>& row, const AnswerLink& link,
                    const std::string& where) {
  const TestMetric& metric = answer.metric();
  const ConfigSummary* base = answer.target_of(*row.front()).baseline;
  const ConfigSummary* fastest = nullptr;
  TimeToTarget best;
  std::vector<std::string> verdicts;
  for (const ConfigSummary* s : row) {
    if (s == base) continue;
    const TimeToTarget t = answer.time_to_target(*s, link);
    const Comparison c = answer.compare(*s, link);
    std::string verdict = str_cat(s->config->label, " ", comparison_text(c, t));
    // Not reached within its runs: where its curve was heading, as laconic advise ranks it.
    if (c.versus == Versus::NotReached) {
      verdict += ", " + curve_time_text(curve_time(answer, *s, answer.step(*s, link)));
      if (base != nullptr)
        if (const std::string standing = standing_text(answer, *s, *base, link); !standing.empty())
          verdict += ", and " + standing;
    }
    verdicts.push_back(verdict);
    if (c.versus != Versus::Faster || (fastest && t.seconds >= best.seconds)) continue;
    fastest = s;
    best = t;
  }
  if (base == nullptr)
    return str_cat(where, ", no configuration is judged: the row has no baseline (--baseline names one).");
  const TimeToTarget base_time = answer.time_to_target(*base, link);
  std::string text = where + ", ";
  if (fastest)
    text += str_cat("use ", fastest->config->label, ": ", time_text(best), " to the target, ",
                    comparison_text(answer.compare(*fastest, link), best), " against ", base->config->label, " (",
                    time_text(base_time), "); it ", cost_text(metric, answer.verdict(*fastest)), ".");
  else
    text += str_cat(
        "no configuration beats the baseline beyond the noise: ", base->config->label,
        std::isnan(base_time.seconds) ? " has no time to the target" : " reaches the target in " + time_text(base_time),
        ".");
  if (!verdicts.empty()) text += str_cat(" Against ", base->config->label, ": ", join(verdicts, "; "), ".");
  return text;
}

/// A configuration's accuracy against the baseline, with what it saved in bytes and, where it
/// did not reach the target for what it lost, the --tolerance that would accept that loss (the
/// loss and the default margin, in --tolerance's units: points of accuracy, % of perplexity).
std::string cost_sentence(const Answer& answer, const ConfigSummary& s, const AnswerLink& own) {
  const Verdict& v = answer.verdict(s);
  std::string text = str_cat(s.config->label, " ", cost_text(answer.metric(), v));
  const double ratio = s.compression.mean;
  if (ratio > 1.05) text += str_cat(", its runs sending ", fixed(ratio, ratio < 10 ? 1 : 0), "x fewer bytes than dense fp32");
  if (answer.compare(s, own).versus == Versus::NotReached && v.cost > 0)
    text += str_cat(" (--tolerance ", fixed(v.cost + default_tolerance(answer.metric()), 1),
                    " would accept that loss and judge it by its time)");
  return text;
}

/// The answer for one row of the grid on every link, in a few sentences.
std::string row_answer(const SectionInput& in, const RowTarget& target, const std::vector<const ConfigSummary*>& row,
                       const std::vector<LinkSpec>& links) {
  const Answer& answer = in.answer;
  const TestMetric& metric = in.metric;
  std::string text = in.grid.rows.size() > 1 ? str_cat(target.row, ": t") : "T";
  if (std::isnan(target.value)) return text + "here is no target: no run recorded a final " + metric.label + ".";
  text += str_cat("arget ", metric.label, metric.higher_is_better ? " >= " : " <= ", fixed(target.value, metric.digits),
                  " (", target.source, ").");
  const AnswerLink own = answer.own_link(*row.front());
  std::vector<AnswerLink> every{own};
  for (const LinkSpec& spec : links) every.push_back({spec.text, spec});
  for (std::size_t i = 0; i < every.size(); ++i)
    text += " " + on_link(answer, row, every[i],
                          str_cat("On ", every[i].name, i == 0 ? " (the runs' link, projected)" : " (projected)"));
  if (in.hardware != nullptr)
    for (std::size_t i = 0; i < every.size(); ++i) {
      AnswerLink there = every[i];
      there.hardware = in.hardware;
      text += " " + on_link(answer, row, there,
                            str_cat("On ", in.hardware->name, " with ", there.name,
                                    i == 0 ? " (the runs' link; " : " (", "projected from the hardware profile)"));
    }
  std::vector<std::string> costs;
  for (const ConfigSummary* s : row)
    if (!answer.is_baseline(*s)) costs.push_back(cost_sentence(answer, *s, own));
  if (!costs.empty() && target.baseline)
    text += str_cat(" Final ", metric.label, " against ", target.baseline->config->label, ": ", join(costs, "; "), ".");
  return text;
}

/// How the answer is computed, folded away below it.
std::string summary_explanation(const TestMetric& metric) {
  return str_cat(
      "The baseline: the compressor the runs' configuration names (baseline = ..., none() by default: a "
      "full-precision exchange), under the synchronous schedule where the schedule is swept, or --baseline; every "
      "other configuration of its row, fp16 and bf16 included, is "
      "judged against it. The target: by default the row's baseline by mean final ",
      metric.label, ", less a tolerance (", tolerance_text(metric, default_tolerance(metric)),
      "; --tolerance changes it, --target sets one value for every row), so that a compressor reaches it only "
      "by giving up no more than that. Time to target = the steps each run needed to reach it x its step on the "
      "link (compute, compress and wait as measured, its messages projected onto the link by the alpha-beta "
      "model), the geometric mean over the runs that reached it, with a 95% interval from Student's t over their "
      "log times (never below zero; none with one run), widened by the compute a configuration differs from the "
      "baseline by (more than 10%: the machine's doing, since no compressor changes forward, backward or the "
      "optimizer) and by how far its host was busier than its cores (run_facts host_demand). Against the "
      "baseline: Welch's 95% interval of the ratio of the two times, on the log scale (a run that never reached "
      "the target counts with the time of its last evaluation, a lower bound). Faster or slower: the interval "
      "lies below or above 1. Within noise: it lies within 1 +/- ",
      fixed(100 * kEquivalenceMargin, 0),
      "%. Inconclusive otherwise, with what would decide it: one run (no interval), some runs that never reached "
      "the target, or about how many more seeds, from the spread these runs show. Not reached: no run reached it. "
      "Accuracy against the baseline: its mean final ",
      metric.label,
      " against the baseline's over seeds (repeats of a seed averaged first), with Welch's 95% "
      "interval. Break-even: the verdict at each bandwidth from 10 Mbit/s to 100 Gbit/s, at the runs' own link's "
      "latency. Compute share: compute over the whole step on its link, as \"Time per step\" shows it. Projections, not measurements (docs/reports.md, \"The answer\").");
}

Table answer_table(const TestMetric& metric, const std::vector<LinkSpec>& links, const HardwareProfile* hardware) {
  Table table;
  table.slug = "answer";
  table.columns = {{"configuration"},
                   {"reached", Align::Right},
                   {"final " + metric.label, Align::Right},
                   {"vs baseline", Align::Right},
                   {"time to target on its link", Align::Right},
                   {"compute share", Align::Right},
                   {"vs baseline on its link", Align::Right}};
  table.csv.header = {"configuration", "link",       "runs_reached", "runs",        "final_metric_mean", "cost",
                      "cost_ci95",     "time_s",     "time_low_s",   "time_high_s", "versus_baseline",   "change",
                      "change_low",    "change_high"};
  for (const LinkSpec& spec : links) {
    table.columns.push_back({"vs baseline on " + spec.text, Align::Right});
    table.csv.header.push_back("versus_baseline@" + spec.text);
  }
  table.columns.push_back({"against the baseline from 10 Mbit/s to 100 Gbit/s"});
  table.csv.header.insert(table.csv.header.end(), {"bandwidths", "break_even_bit_s", "crossover_bit_s"});
  if (hardware != nullptr) {
    table.columns.push_back({"the same on " + hardware->name + " (projected)"});
    table.csv.header.insert(table.csv.header.end(),
                            {"bandwidths_on_hardware", "break_even_on_hardware_bit_s", "crossover_on_hardware_bit_s"});
  }
  table.csv.header.push_back("compute_utilization");
  return table;
}

void add_answer_row(Table& table, const Answer& answer, const ConfigSummary& s, const std::vector<LinkSpec>& links,
                    const HardwareProfile* hardware) {
  const TestMetric& metric = answer.metric();
  const Verdict& v = answer.verdict(s);
  const AnswerLink own = answer.own_link(s);
  const TimeToTarget t = answer.time_to_target(s, own);
  const Comparison c = answer.compare(s, own);
  const BandwidthScan scan = answer.scan(s);
  std::vector<std::string> cells = {s.config->label,
                                    str_cat(t.reached, "/", t.runs),
                                    mean_std_text(s.final_metric, metric.digits),
                                    cost_text(metric, v),
                                    time_text(t),
                                    percent(compute_utilization(s)),
                                    comparison_text(c, t)};
  std::vector<std::string> raw = {s.config->label,
                                  own.name,
                                  std::to_string(t.reached),
                                  std::to_string(t.runs),
                                  raw_number(s.final_metric.mean),
                                  raw_number(v.cost),
                                  raw_number(v.cost_half_width),
                                  raw_number(t.seconds),
                                  raw_number(t.low),
                                  raw_number(t.high),
                                  comparison_text(c, t),
                                  raw_number(c.change),
                                  raw_number(c.low),
                                  raw_number(c.high)};
  for (const LinkSpec& spec : links) {
    const AnswerLink link{spec.text, spec};
    const std::string text = comparison_text(answer.compare(s, link), answer.time_to_target(s, link));
    cells.push_back(text);
    raw.push_back(text);
  }
  cells.push_back(scan.text);
  raw.insert(raw.end(), {scan.text, raw_number(scan.break_even), raw_number(scan.crossover)});
  if (hardware != nullptr) {
    const BandwidthScan there = answer.scan(s, hardware);
    cells.push_back(there.text);
    raw.insert(raw.end(), {there.text, raw_number(there.break_even), raw_number(there.crossover)});
  }
  raw.push_back(raw_number(compute_utilization(s)));
  table.add_row(std::move(cells), std::move(raw));
  table.about({.configuration = s.config});
}

}  // namespace

Section summary_section(const SectionInput& in, const std::vector<LinkSpec>& links) {
  const Answer& answer = in.answer;
  Section section{"The answer", "", {}, {}};
  section.anchor = "answer";
  std::vector<std::string> lead;
  if (!answer.baseline_source().empty()) lead.push_back(str_cat("Baseline: ", answer.baseline_source(), "."));
  for (const RowTarget& target : answer.targets()) {
    std::vector<const ConfigSummary*> row;
    for (const ConfigSummary& s : in.summaries)
      if (s.config->row == target.row) row.push_back(&s);
    if (!row.empty()) lead.push_back(row_answer(in, target, row, links));
  }
  std::vector<const Verdict*> verdicts;
  for (const Verdict& v : answer.verdicts()) verdicts.push_back(&v);
  const std::string disturbed = noise_text(verdicts);
  if (!disturbed.empty())
    lead.push_back(
        str_cat("Times widened for the machine's noise (so that it is not read as a result): ", disturbed, "."));
  section.lead = join(lead, "\n\n");
  section.text = summary_explanation(in.metric);
  Table table = answer_table(in.metric, links, in.hardware);
  for (const ConfigSummary& s : in.summaries) add_answer_row(table, answer, s, links, in.hardware);
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
