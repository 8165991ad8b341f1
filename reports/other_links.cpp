// Section 3b: the runs projected onto links they never used (laconic report --link), from the
// messages each step recorded.
#include <cmath>
#include <cstdio>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
Section other_links_section(const SectionInput& in, const std::vector<LinkSpec>& links) {
  Section section{
      "Projected onto other links",
      "Mean seconds per step and worker rank if each run had used the links given with --link: compute + compress "
      "+ wait as measured, and the messages each step recorded (messages, link_bytes) projected by the alpha-beta "
      "model, messages x latency + 8 x link_bytes / bandwidth (docs/network-model.md). A projection, not a "
      "measurement: none of these runs used these links. vs dense = against the same row's dense (none) "
      "configuration on the same link. Runs with allreduce { overlap = true } are projected as if nothing was "
      "hidden behind backward: an upper bound for them.",
      {},
      {}};
  Table table;
  table.slug = "other_links";
  table.columns = {{"configuration"}};
  table.csv.header = {"configuration"};
  for (const auto& link : links) {
    table.columns.push_back({str_cat("step on ", link.text, " (s)"), Align::Right});
    table.columns.push_back({str_cat("vs dense on ", link.text), Align::Right});
    table.csv.header.push_back(str_cat("step_s@", link.text));
  }
  bool any_missing = false;
  for (const ConfigSummary& s : in.summaries) {
    const ConfigSummary* dense = row_dense(in.grid, in.summaries, s);
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const auto& link : links) {
      const double step = step_on_link(s, link);
      any_missing = any_missing || std::isnan(step);
      std::string versus = kMissing;
      if (dense == &s && !std::isnan(step)) {
        versus = "baseline";
      } else if (dense != nullptr) {
        const double base = step_on_link(*dense, link);
        if (!std::isnan(step) && !std::isnan(base) && base > 0) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * (step - base) / base);
          versus = buf;
        }
      }
      cells.push_back(seconds(step));
      cells.push_back(versus);
      raw.push_back(raw_number(step));
    }
    table.add_row(cells, raw);
  }
  if (any_missing)
    section.text +=
        " - : the runs did not record their messages (an older laconic stored no messages and "
        "link_bytes per step); train them again to project them.";
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
