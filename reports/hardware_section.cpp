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

std::string percent(double share) { return std::isnan(share) ? std::string(kMissing) : fixed(100 * share, 0) + "%"; }

Table step_table(const SectionInput& in, std::set<std::string>& missing) {
  const HardwareProfile& hw = *in.hardware;
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
  for (const ConfigSummary& s : in.summaries) {
    const HardwareStep there = mean_step(s, hw);
    if (!there.missing.empty()) missing.insert(str_cat(s.config->label, ": ", there.missing));
    const double here = local_seconds(s) + s.projected_communicate.mean;
    const double share_here = s.projected_communicate.mean / here;
    const double share_there = (there.communicate + there.codec - there.hidden) / there.total();
    const bool projected = there.missing.empty();
    // (value, measured here): a projected part is "-" where the run could not be projected.
    const std::vector<std::pair<double, bool>> values = {
        {s.compute.mean, true}, {there.compute, false},     {s.compress.mean, true},
        {there.codec, false},   {there.communicate, false}, {there.hidden, false},
        {here, true},           {there.total(), false}};
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const auto& [value, measured] : values) {
      cells.push_back(seconds(measured || projected ? value : kNaN));
      raw.push_back(raw_number(measured || projected ? value : kNaN));
    }
    cells.push_back(str_cat(percent(share_here), " / ", percent(projected ? share_there : kNaN)));
    raw.insert(raw.end(), {raw_number(share_here), raw_number(projected ? share_there : kNaN)});
    table.add_row(std::move(cells), std::move(raw));
  }
  return table;
}

std::string time_text(const TimeToTarget& t) {
  return std::isnan(t.seconds) ? std::string(kMissing) : str_cat(seconds(t.seconds), " ± ", seconds(t.half_width));
}

Table target_table(const SectionInput& in, const std::vector<AnswerLink>& links) {
  Table table;
  table.slug = "hardware_target";
  table.columns = {{"configuration"}};
  table.csv.header = {"configuration"};
  for (const AnswerLink& link : links) {
    const std::string where = link.spec ? link.name : std::string("its link");
    table.columns.push_back({str_cat("to target there on ", where, " (s)"), Align::Right});
    table.columns.push_back({str_cat("vs dense there on ", where)});
    table.csv.header.insert(table.csv.header.end(), {"time_there_s@" + where, "versus_dense_there@" + where});
  }
  table.columns.insert(table.columns.end(), {{"against dense here, 10 Mbit/s to 100 Gbit/s"},
                                             {"against dense there, 10 Mbit/s to 100 Gbit/s"}});
  table.csv.header.insert(table.csv.header.end(),
                          {"bandwidths_here", "break_even_here_bit_s", "bandwidths_there", "break_even_there_bit_s"});
  for (const ConfigSummary& s : in.summaries) {
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const AnswerLink& link : links) {
      const TimeToTarget t = in.answer.time_to_target(s, link);
      const std::string versus = comparison_text(in.answer.compare(s, link), t);
      cells.insert(cells.end(), {time_text(t), versus});
      raw.insert(raw.end(), {raw_number(t.seconds), versus});
    }
    const BandwidthScan here = in.answer.scan(s), there = in.answer.scan(s, in.hardware);
    cells.insert(cells.end(), {here.text, there.text});
    raw.insert(raw.end(), {here.text, raw_number(here.break_even), there.text, raw_number(there.break_even)});
    table.add_row(std::move(cells), std::move(raw));
  }
  return table;
}

std::string break_even_text(const BandwidthScan& scan) {
  return std::isnan(scan.break_even) ? std::string("never faster") : "faster up to " + rate_text(scan.break_even);
}

/// Why the answer moved: how much faster the dense step computes there, what share of it
/// communication then takes, and each compressor's break-even here and there.
std::string why_it_moved(const SectionInput& in) {
  const HardwareProfile& hw = *in.hardware;
  std::vector<std::string> sentences;
  for (const ConfigSummary& s : in.summaries) {
    if (s.config->runs.front()->run.compressor != "none") continue;
    const HardwareStep there = mean_step(s, hw);
    if (!there.missing.empty()) continue;
    const double here = local_seconds(s) + s.projected_communicate.mean;
    sentences.push_back(str_cat(s.config->label, ": a step computes in ", seconds(there.compute), " s there against ",
                                seconds(s.compute.mean), " s measured here (", fixed(s.compute.mean / there.compute, 1),
                                "x), so communication on its link is ",
                                percent((there.communicate + there.codec - there.hidden) / there.total()),
                                " of the step there against ", percent(s.projected_communicate.mean / here), " here."));
  }
  for (const ConfigSummary& s : in.summaries) {
    if (is_dense(s)) continue;
    const BandwidthScan here = in.answer.scan(s), there = in.answer.scan(s, in.hardware);
    if (here.break_even == there.break_even && here.text == there.text) continue;
    sentences.push_back(str_cat(s.config->label, ": against dense ", break_even_text(here), " here, ",
                                break_even_text(there), " there."));
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
  std::set<std::string> missing;
  section.tables.push_back(step_table(in, missing));
  std::vector<AnswerLink> every;
  if (!in.summaries.empty()) every.push_back(in.answer.own_link(in.summaries.front()));
  for (const LinkSpec& spec : links) every.push_back({spec.text, spec});
  for (AnswerLink& link : every) link.hardware = &hw;
  section.tables.push_back(target_table(in, every));
  section.lead = why_it_moved(in);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
    section.lead += str_cat(section.lead.empty() ? "" : " ", "Not projected (-): ", list, ".");
  }
  section.text = explanation(hw);
  return section;
}

}  // namespace laconic::reports
