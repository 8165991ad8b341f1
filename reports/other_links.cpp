// Section 3b: the runs projected onto links they never used (laconic report --link), from the
// messages each step recorded.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
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
  // Runs on islands: each --link stands for every link kind at once.
  bool on_islands = false;
  for (const ConfigSummary& s : in.summaries)
    for (const RunData* run : s.config->runs) on_islands = on_islands || !std::isnan(run->between_link_bytes);
  if (on_islands)
    section.lead += str_cat(section.lead.empty() ? "" : "\n\n",
                            "Runs on islands (network = cluster { }): each link here stands for both kinds, inside "
                            "islands and between them, as if the ranks shared one link; every message is projected "
                            "onto it alone, none sharing it (\"Bytes per link kind\" has what crossed between).");
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
