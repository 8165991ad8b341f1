// Section 3c: the runs projected onto other hardware (laconic report --hardware), next to the
// steps measured here, and how that moves the answer.
#include <cmath>
#include <set>

#include "reports/format.hpp"
#include "reports/hardware_step.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

/// A configuration's projected step: each part's mean over its runs on their own link; `missing`
/// says why a run could not be projected.
HardwareStep mean_step(const ConfigSummary& s, const HardwareProfile& hardware) {
  HardwareStep mean{0, 0, 0, 0, ""};
  double runs = 0;
  for (const RunData* run : s.config->runs) {
    if (!run->run.link) {
      mean.missing = "its runs' network is not a link laconic can project onto";
      return mean;
    }
    const HardwareStep step = hardware_step(*run, hardware, *run->run.link);
    if (!step.missing.empty()) return step;
    mean.compute += step.compute;
    mean.codec += step.codec;
    mean.communicate += step.communicate;
    mean.hidden += step.hidden;
    ++runs;
  }
  if (runs == 0) return {kNaN, kNaN, kNaN, 0, "no runs"};
  for (double* part : {&mean.compute, &mean.codec, &mean.communicate, &mean.hidden}) *part /= runs;
  return mean;
}


/// One configuration here and there, computed once for the section's tables and its lead.
struct Projection {
  const ConfigSummary* summary = nullptr;
  HardwareStep there;
  double step_here = kNaN;  ///< measured compute, compress and wait + communication on its link
  BandwidthScan scan_here, scan_there;

  /// The share of the step communication takes: here its projection on the runs' link, there
  /// the exchange (codec and communication) backward does not hide.
  double share_here() const { return summary->projected_communicate.mean / step_here; }
  double share_there() const { return (there.communicate + there.codec - there.hidden) / there.total(); }
};

Projection project(const SectionInput& in, const ConfigSummary& s) {
  return {&s, mean_step(s, *in.hardware), local_seconds(s) + s.projected_communicate.mean, in.answer.scan(s),
          in.answer.scan(s, in.hardware)};
}

Table step_table(const std::vector<Projection>& projections, std::set<std::string>& missing) {
  Table table;
  table.slug = "hardware_step";
  table.columns = {{"configuration"},
                   {"compute here (s)", Align::Right},
                   {"compute there (s)", Align::Right},
                   {"compress here (s)", Align::Right},
                   {"compress there (s)", Align::Right},
                   {"communication on its link (s)", Align::Right},
                   {"hidden behind backward there (s)", Align::Right},
                   {"step here (s)", Align::Right},
                   {"step there (s)", Align::Right},
                   {"communication share here / there", Align::Right}};
  table.csv.header = {"configuration",
                      "compute_here_s",
                      "compute_there_s",
                      "compress_here_s",
                      "compress_there_s",
                      "communicate_s",
                      "hidden_there_s",
                      "step_here_s",
                      "step_there_s",
                      "communication_share_here",
                      "communication_share_there"};
  for (const Projection& p : projections) {
    const ConfigSummary& s = *p.summary;
    const HardwareStep& there = p.there;
    if (!there.missing.empty()) missing.insert(str_cat(s.config->label, ": ", there.missing));
    const bool projected = there.missing.empty();
    const double share_there = projected ? p.share_there() : kNaN;
    // (value, measured here): a projected part is "-" where the run could not be projected.
    const std::vector<std::pair<double, bool>> values = {
        {s.compute.mean, true},     {there.compute, false}, {s.compress.mean, true}, {there.codec, false},
        {there.communicate, false}, {there.hidden, false},  {p.step_here, true},     {there.total(), false}};
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const auto& [value, measured] : values) {
      cells.push_back(seconds(measured || projected ? value : kNaN));
      raw.push_back(raw_number(measured || projected ? value : kNaN));
    }
    cells.push_back(str_cat(percent(p.share_here()), " / ", percent(share_there)));
    raw.insert(raw.end(), {raw_number(p.share_here()), raw_number(share_there)});
    table.add_row(std::move(cells), std::move(raw));
    table.about({.configuration = s.config});
  }
  return table;
}

Table hardware_target_table(const SectionInput& in, const std::vector<Projection>& projections,
                   const std::vector<AnswerLink>& links) {
  Table table;
  table.slug = "hardware_target";
  table.columns = {{"configuration"}};
  table.csv.header = {"configuration"};
  for (const AnswerLink& link : links) {
    const std::string where = link.own ? std::string("its link") : link.name;
    table.columns.push_back({str_cat("to target there on ", where), Align::Right});
    table.columns.push_back({str_cat("vs baseline there on ", where)});
    table.csv.header.insert(table.csv.header.end(), {"time_there_s@" + where, "versus_baseline_there@" + where});
  }
  table.columns.insert(table.columns.end(), {{"against the baseline here, 10 Mbit/s to 100 Gbit/s"},
                                             {"against the baseline there, 10 Mbit/s to 100 Gbit/s"}});
  table.csv.header.insert(table.csv.header.end(),
                          {"bandwidths_here", "break_even_here_bit_s", "bandwidths_there", "break_even_there_bit_s"});
  for (const Projection& p : projections) {
    const ConfigSummary& s = *p.summary;
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const AnswerLink& link : links) {
      const TimeToTarget t = in.answer.time_to_target(s, link);
      const std::string versus = comparison_text(in.answer.compare(s, link), t);
      cells.insert(cells.end(), {time_text(t), versus});
      raw.insert(raw.end(), {raw_number(t.seconds), versus});
    }
    const BandwidthScan &here = p.scan_here, &there = p.scan_there;
    cells.insert(cells.end(), {here.text, there.text});
    raw.insert(raw.end(), {here.text, raw_number(here.break_even), there.text, raw_number(there.break_even)});
    table.add_row(std::move(cells), std::move(raw));
    table.about({.configuration = s.config});
  }
  return table;
}

std::string break_even_text(const BandwidthScan& scan) {
  if (!std::isnan(scan.break_even)) return "faster up to " + rate_text(scan.break_even);
  if (!std::isnan(scan.crossover)) return "faster up to " + rate_text(scan.crossover) + " by the point estimates";
  return "never faster";
}

/// Why the answer moved: how much faster the baseline's step computes there, what share of it
/// communication then takes, and each compressor's break-even here and there.
std::string why_it_moved(const Answer& answer, const std::vector<Projection>& projections) {
  std::vector<std::string> sentences;
  for (const Projection& p : projections) {
    const ConfigSummary& s = *p.summary;
    if (!answer.is_baseline(s) || !p.there.missing.empty()) continue;
    sentences.push_back(str_cat(s.config->label, ": a step computes in ", seconds(p.there.compute), " s there against ",
                                seconds(s.compute.mean), " s measured here (",
                                fixed(s.compute.mean / p.there.compute, 1), "x), so communication on its link is ",
                                percent(p.share_there()), " of the step there against ", percent(p.share_here()),
                                " here."));
  }
  for (const Projection& p : projections) {
    if (answer.is_baseline(*p.summary)) continue;
    if (p.scan_here.break_even == p.scan_there.break_even && p.scan_here.text == p.scan_there.text) continue;
    sentences.push_back(str_cat(p.summary->config->label, ": against the baseline ", break_even_text(p.scan_here), " here, ",
                                break_even_text(p.scan_there), " there."));
  }
  std::string out;
  for (const std::string& t : sentences) out += (out.empty() ? "Why the answer moves: " : " ") + t;
  return out;
}

std::string explanation(const HardwareProfile& hw) {
  return str_cat(
      "Here: the steps measured on this machine (compute, compress and wait as measured, communication projected "
      "onto the runs' link). There: the same runs projected onto ",
      hw.name, " (", hw.origin,
      "): compute = the profile's forward + backward + optimizer for the run's model, batch size and parameter "
      "count; compress = the profile's cost of the run's compressor, per call and per element, once to compress "
      "and once per payload it decoded (decoded_payloads); communication = the messages and link bytes each step "
      "recorded, projected onto the link (alpha-beta, docs/network-model.md); for allreduce { overlap = true }, "
      "what backward still runs after the first 1 MiB bucket is ready is taken off the exchange. Waiting for "
      "stragglers is left out there (every device alike). The steps to the target are these runs' own: the "
      "accuracy side does not depend on the hardware. Projections, not measurements; what the model leaves out "
      "is in docs/hardware.md.");
}

}  // namespace

Section hardware_section(const SectionInput& in, const std::vector<LinkSpec>& links) {
  const HardwareProfile& hw = *in.hardware;
  Section section{str_cat("On ", hw.name, " (projected)"), "", {}, {}};
  section.anchor = "hardware";
  std::vector<Projection> projections;
  for (const ConfigSummary& s : in.summaries) projections.push_back(project(in, s));
  std::set<std::string> missing;
  section.tables.push_back(step_table(projections, missing));
  std::vector<AnswerLink> every;
  if (!in.summaries.empty()) every.push_back(in.answer.own_link(in.summaries.front()));
  for (const LinkSpec& spec : links) every.push_back({spec.text, spec});
  for (AnswerLink& link : every) link.hardware = &hw;
  section.tables.push_back(hardware_target_table(in, projections, every));
  section.lead = why_it_moved(in.answer, projections);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    section.lead += str_cat(section.lead.empty() ? "" : " ", "Not projected (-): ", list, ".");
  }
  section.text = explanation(hw);
  return section;
}

}  // namespace laconic::reports
