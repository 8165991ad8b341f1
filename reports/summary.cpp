// The report's first section: the answer in a few sentences and one small table, for the runs'
// own link and every --link (reports/answer.hpp computes it; this only words it).
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

std::string time_text(const TimeToTarget& t) {
  if (std::isnan(t.seconds)) return kMissing;
  return str_cat(seconds(t.seconds), " ± ", seconds(t.half_width));
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

/// What the row's runs say on one link: the fastest configuration to the target and whether a
/// compressor beats dense there beyond the noise.
std::string on_link(const Answer& answer, const std::vector<const ConfigSummary*>& row, const AnswerLink& link,
                    const std::string& where) {
  const TestMetric& metric = answer.metric();
  const ConfigSummary* fastest = nullptr;
  TimeToTarget best;
  for (const ConfigSummary* s : row) {
    const TimeToTarget t = answer.time_to_target(*s, link);
    if (!t.all_reached() || std::isnan(t.seconds) || (fastest && t.seconds >= best.seconds)) continue;
    fastest = s;
    best = t;
  }
  if (!fastest)
    return str_cat(where,
                   ", no configuration reached the target in all its runs (a lower one: --tolerance or --target).");
  const std::string label = fastest->config->label;
  if (is_dense(*fastest)) {
    std::vector<std::string> close;
    for (const ConfigSummary* s : row)
      if (answer.compare(*s, link).versus == Versus::WithinNoise) close.push_back(s->config->label);
    return str_cat(where, ", dense is fastest: ", label, " reaches the target in ", time_text(best),
                   " s; no compressor beats it beyond the noise",
                   close.empty() ? std::string(".") : str_cat(" (within noise: ", join(close, ", "), ")."));
  }
  const Comparison c = answer.compare(*fastest, link);
  const Verdict& v = answer.verdict(*fastest);
  const std::string cost = cost_text(metric, v);
  if (c.versus == Versus::Faster)
    return str_cat(where, ", use ", label, ": ", time_text(best), " s to the target, ", comparison_text(c, best),
                   " against dense; against dense it ", cost, ".");
  if (c.versus == Versus::Unknown)
    return str_cat(where, ", ", label, " is fastest (", time_text(best),
                   " s); no dense configuration of its row reached the target to compare it with.");
  return str_cat(where, ", ", label, " is fastest (", time_text(best), " s), but ", comparison_text(c, best),
                 " against dense: these runs cannot tell them apart",
                 v.noise.empty() ? std::string() : str_cat(" (", join(v.noise, "; "), ")"), ". It ", cost, ".");
}

/// The sentence for a row where no compressed configuration reached the target in all its runs:
/// dense's times on every link, said once.
std::string only_dense(const Answer& answer, const std::vector<const ConfigSummary*>& row,
                       const std::vector<AnswerLink>& links) {
  const ConfigSummary* dense = nullptr;
  TimeToTarget best;
  for (const ConfigSummary* s : row) {
    const TimeToTarget t = answer.time_to_target(*s, links.front());
    if (!is_dense(*s) || !t.all_reached() || std::isnan(t.seconds) || (dense && t.seconds >= best.seconds)) continue;
    dense = s;
    best = t;
  }
  if (!dense) return "No configuration reached the target in all its runs (a lower one: --tolerance or --target).";
  std::vector<std::string> times;
  for (std::size_t i = 0; i < links.size(); ++i)
    times.push_back(str_cat(time_text(answer.time_to_target(*dense, links[i])), " s on ", links[i].name,
                            i == 0 ? " (the runs' link, projected)" : " (projected)"));
  return str_cat("Only dense reached the target in all its runs: ", dense->config->label, ", ", join(times, ", "), ".");
}

/// The answer for one row of the grid on every link, in a few sentences.
std::string row_answer(const SectionInput& in, const RowTarget& target, const std::vector<const ConfigSummary*>& row,
                       const std::vector<LinkSpec>& links) {
  const Answer& answer = in.answer;
  const TestMetric& metric = in.metric;
  std::string text = in.grid.rows.size() > 1 ? str_cat(target.row, ": t") : "T";
  if (std::isnan(target.value)) return text + "here is no target: no run recorded a final " + metric.label + ".";
  text += str_cat("arget ", metric.label, metric.higher_is_better ? " >= " : " <= ", fixed(target.value, metric.digits),
                  " (", target.source, "). ");
  const AnswerLink own = answer.own_link(*row.front());
  std::vector<AnswerLink> every{own};
  for (const LinkSpec& spec : links) every.push_back({spec.text, spec});
  bool compressed_reached = false;
  for (const ConfigSummary* s : row)
    compressed_reached = compressed_reached || (!is_dense(*s) && answer.time_to_target(*s, own).all_reached());
  if (compressed_reached) {
    for (std::size_t i = 0; i < every.size(); ++i)
      text += (i ? " " : "") +
              on_link(answer, row, every[i],
                      str_cat("On ", every[i].name, i == 0 ? " (the runs' link, projected)" : " (projected)"));
    if (in.hardware != nullptr)
      for (std::size_t i = 0; i < every.size(); ++i) {
        AnswerLink there = every[i];
        there.hardware = in.hardware;
        text += " " + on_link(answer, row, there,
                              str_cat("On ", in.hardware->name, " with ", there.name,
                                      i == 0 ? " (the runs' link; " : " (", "projected from the hardware profile)"));
      }
  } else {
    text += only_dense(answer, row, every);
  }
  std::vector<std::string> missed;
  for (const ConfigSummary* s : row) {
    const TimeToTarget t = answer.time_to_target(*s, own);
    if (is_dense(*s) || t.all_reached()) continue;
    const std::string cost = cost_text(metric, answer.verdict(*s));  // "-" with no dense run to compare
    missed.push_back(str_cat(s->config->label, " reached it in ", t.reached, " of ", t.runs, " runs",
                             cost == kMissing ? std::string() : " and " + cost));
  }
  if (!missed.empty())
    text += str_cat(" Never a winner, since not every run reached the target: ", join(missed, "; "), ".");
  return text;
}

/// How the answer is computed, folded away below it.
std::string summary_explanation(const TestMetric& metric) {
  return str_cat(
      "The target: by default the row's best dense configuration (none or fp16) by mean final ", metric.label,
      ", less a tolerance (", tolerance_text(metric, default_tolerance(metric)),
      "; --tolerance changes it, --target sets one value for every row), so that a compressor reaches it only "
      "by giving up no more than that. Time to target = the steps each run needed to reach it x its step on the "
      "link (compute, compress and wait as measured, communication projected by the alpha-beta model), mean "
      "over the runs that reached it, ± the noise: the half-width of its 95% interval over the runs (two or "
      "more), else steps x half the interquartile range of the run's measured step, widened by steps x the "
      "compute a configuration differs from dense by (more than 10%: the machine's doing, since no compressor "
      "changes forward, backward or the optimizer) and by steps x its local step x how far its host was busier "
      "than its cores (run_facts host_demand). A configuration is faster or slower than the fastest dense one "
      "of its row only when the two intervals do not overlap; else within noise. One that reached the target "
      "in only some of its runs is never called a winner. Accuracy vs dense: its mean final ",
      metric.label,
      " against the baseline's over seeds (repeats of a seed averaged first), with Welch's 95% "
      "interval. Break-even: the verdict at each bandwidth from 10 Mbit/s to 100 Gbit/s (50 us per message). "
      "Projections, not measurements (docs/reports.md, \"The answer\").");
}

Table answer_table(const TestMetric& metric, const std::vector<LinkSpec>& links, const HardwareProfile* hardware) {
  Table table;
  table.slug = "answer";
  table.columns = {{"configuration"},
                   {"reached", Align::Right},
                   {"final " + metric.label, Align::Right},
                   {"vs dense", Align::Right},
                   {"time to target on its link (s)", Align::Right},
                   {"vs dense on its link", Align::Right}};
  table.csv.header = {"configuration", "runs_reached", "runs",         "final_metric_mean", "cost",
                      "cost_ci95",     "time_s",       "time_noise_s", "versus_dense"};
  for (const LinkSpec& spec : links) {
    table.columns.push_back({"vs dense on " + spec.text, Align::Right});
    table.csv.header.push_back("versus_dense@" + spec.text);
  }
  table.columns.push_back({"against dense from 10 Mbit/s to 100 Gbit/s"});
  table.csv.header.insert(table.csv.header.end(), {"bandwidths", "break_even_bit_s"});
  if (hardware != nullptr) {
    table.columns.push_back({"the same on " + hardware->name + " (projected)"});
    table.csv.header.insert(table.csv.header.end(), {"bandwidths_on_hardware", "break_even_on_hardware_bit_s"});
  }
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
                                    comparison_text(c, t)};
  std::vector<std::string> raw = {
      s.config->label,      std::to_string(t.reached),     std::to_string(t.runs), raw_number(s.final_metric.mean),
      raw_number(v.cost),   raw_number(v.cost_half_width), raw_number(t.seconds),  raw_number(t.half_width),
      comparison_text(c, t)};
  for (const LinkSpec& spec : links) {
    const AnswerLink link{spec.text, spec};
    const std::string text = comparison_text(answer.compare(s, link), answer.time_to_target(s, link));
    cells.push_back(text);
    raw.push_back(text);
  }
  cells.push_back(scan.text);
  raw.insert(raw.end(), {scan.text, raw_number(scan.break_even)});
  if (hardware != nullptr) {
    const BandwidthScan there = answer.scan(s, hardware);
    cells.push_back(there.text);
    raw.insert(raw.end(), {there.text, raw_number(there.break_even)});
  }
  table.add_row(std::move(cells), std::move(raw));
}

}  // namespace

Section summary_section(const SectionInput& in, const std::vector<LinkSpec>& links) {
  const Answer& answer = in.answer;
  Section section{"The answer", "", {}, {}};
  section.anchor = "answer";
  std::vector<std::string> lead;
  for (const RowTarget& target : answer.targets()) {
    std::vector<const ConfigSummary*> row;
    for (const ConfigSummary& s : in.summaries)
      if (s.config->row == target.row) row.push_back(&s);
    if (!row.empty()) lead.push_back(row_answer(in, target, row, links));
  }
  std::vector<std::string> disturbed;
  for (const Verdict& v : answer.verdicts())
    if (!v.noise.empty()) disturbed.push_back(str_cat(v.summary->config->label, ": ", join(v.noise, "; ")));
  if (!disturbed.empty())
    lead.push_back(str_cat(
        "Times widened for the machine's noise (so that it is not read as a result): ", join(disturbed, ". "), "."));
  section.lead = join(lead, "\n\n");
  section.text = summary_explanation(in.metric);
  Table table = answer_table(in.metric, links, in.hardware);
  for (const ConfigSummary& s : in.summaries) add_answer_row(table, answer, s, links, in.hardware);
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
