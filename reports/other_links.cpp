// Section 3b: the runs projected onto links they never used (laconic report --link), from the
// messages each step recorded.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// What a link given with --link stands for on runs on islands, for each link kind: the link
// between islands, the messages inside staying on the runs' own inside link; or, for runs whose
// inside link was not recorded (before laconic resolved their islands), both kinds at once.
std::string islands_lead(const std::vector<ConfigSummary>& summaries, const std::string& separator) {
  std::string kept, whole;
  for (const ConfigSummary& s : summaries) {
    if (std::isnan(s.between_link_bytes.mean)) continue;
    const RecordedTraffic traffic = traffic_of(s);
    if (!traffic.on_islands())
      whole += str_cat(whole.empty() ? "" : ", ", s.config->label);
    else if (const std::string link = str_cat(traffic.inside->text, " at ", traffic.inside->latency_seconds * 1e6, " us");
             kept.find(link) == std::string::npos)
      kept += str_cat(kept.empty() ? "" : "; ", link);
  }
  std::string lead;
  if (!kept.empty())
    lead = str_cat(separator,
                   "Runs on islands (network = cluster { }): each link here stands for the link between islands; the "
                   "messages inside an island stay on the runs' own inside link (",
                   kept,
                   ") and the messages between carry their phases' load, as the cluster projects them (\"Bytes per "
                   "link kind\" has what crossed).");
  if (!whole.empty())
    lead += str_cat(lead.empty() ? separator : "\n\n", "Runs on islands recorded before laconic kept their inside link (",
                    whole,
                    "): each link here stands for both kinds, inside islands and between them, as if the ranks shared "
                    "one link; every message is projected onto it alone, none sharing it.");
  return lead;
}

}  // namespace

Section other_links_section(const SectionInput& in, const std::vector<LinkSpec>& links) {
  Section section{
      "Projected onto other links",
      "Mean seconds per step and worker rank if each run had used the links given with --link: compute + compress "
      "+ wait as measured, and the messages each step recorded (messages, link_bytes) projected by the alpha-beta "
      "model, messages x latency + 8 x link_bytes / bandwidth (docs/network-model.md). A projection, not a "
      "measurement: none of these runs used these links. to target vs baseline = the time to the row's target on "
      "that link against the row's baseline there: faster, slower, within noise or inconclusive, as \"The "
      "answer\" decides them; not reached where none of its runs reached the target. Runs with allreduce { overlap = true } are projected as if nothing was hidden "
      "behind backward: an upper bound for them.",
      {},
      {}};
  Table table;
  table.slug = "other_links";
  table.columns = {{"configuration"}};
  table.csv.header = {"configuration"};
  for (const auto& link : links) {
    table.columns.push_back({str_cat("step on ", link.text, " (s)"), Align::Right});
    table.columns.push_back({str_cat("to target vs baseline on ", link.text), Align::Right});
    table.csv.header.push_back(str_cat("step_s@", link.text));
    table.csv.header.push_back(str_cat("versus_baseline@", link.text));
  }
  bool any_missing = false;
  for (const ConfigSummary& s : in.summaries) {
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const auto& link : links) {
      const double step = step_on_link(s, link);
      any_missing = any_missing || std::isnan(step);
      const AnswerLink answer_link{link.text, link};
      const std::string versus =
          comparison_text(in.answer.compare(s, answer_link), in.answer.time_to_target(s, answer_link));
      cells.push_back(seconds(step));
      cells.push_back(versus);
      raw.push_back(raw_number(step));
      raw.push_back(versus);
    }
    table.add_row(cells, raw);
    table.about({.configuration = s.config});
  }
  if (any_missing)
    section.lead =
        "- : the runs did not record their messages (an older laconic stored no messages and "
        "link_bytes per step); train them again to project them.";
  section.lead += islands_lead(in.summaries, section.lead.empty() ? "" : "\n\n");
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
