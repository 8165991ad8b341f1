// Section 3b: the runs projected onto links they never used (laconic report --link), from the
// messages each step recorded.
#include <cmath>
#include <cstdio>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

double or_zero(double value) { return std::isnan(value) ? 0 : value; }

// Seconds per step and worker rank of `s` on `link`: measured compute, compress and wait, the
// recorded messages projected. NaN when the runs did not record their messages.
double step_on(const ConfigSummary& s, const LinkSpec& link) {
  if (std::isnan(s.messages.mean) || std::isnan(s.link_bytes.mean)) return kNaN;
  return or_zero(s.compute.mean) + or_zero(s.compress.mean) + or_zero(s.wait.mean) +
         link.project(s.messages.mean, s.link_bytes.mean);
}

}  // namespace

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
    const ConfigSummary* dense = nullptr;
    if (const Configuration* d = in.grid.find(s.config->row, "none"))
      for (const ConfigSummary& other : in.summaries)
        if (other.config == d) dense = &other;
    std::vector<std::string> cells{s.config->label}, raw{s.config->label};
    for (const auto& link : links) {
      const double step = step_on(s, link);
      any_missing = any_missing || std::isnan(step);
      std::string versus = kMissing;
      if (dense == &s && !std::isnan(step)) {
        versus = "baseline";
      } else if (dense != nullptr) {
        const double base = step_on(*dense, link);
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
    section.text += " - : the runs did not record their messages (an older laconic stored no messages and "
                    "link_bytes per step); train them again to project them.";
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
