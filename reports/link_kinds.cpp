// "Bytes per link kind": runs on islands (network = cluster { }) split their messages between the
// links inside islands and those between them; per configuration, what each kind carried per
// step and worker rank.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// The mean over the configuration's runs of a run-level mean; NaN when none has it.
double mean_over_runs(const Configuration& c, double RunData::*member) {
  double sum = 0;
  int n = 0;
  for (const RunData* run : c.runs)
    if (!std::isnan(run->*member)) {
      sum += run->*member;
      ++n;
    }
  return n == 0 ? kNaN : sum / n;
}

}  // namespace

std::optional<Section> link_kinds_section(const SectionInput& in) {
  Table table;
  table.slug = "link_kinds";
  table.columns = {{"configuration"},
                   {"messages inside", Align::Right},
                   {"bytes inside", Align::Right},
                   {"messages between", Align::Right},
                   {"bytes between", Align::Right},
                   {"share between", Align::Right},
                   {"the link between carried", Align::Right}};
  table.csv.header = {"configuration", "messages_inside", "link_bytes_inside", "messages_between",
                      "link_bytes_between", "shared_bytes_between"};
  for (const Configuration& c : in.grid.configurations) {
    const double between_bytes = mean_over_runs(c, &RunData::between_link_bytes);
    if (std::isnan(between_bytes)) continue;
    const double messages = mean_over_runs(c, &RunData::messages), bytes = mean_over_runs(c, &RunData::link_bytes);
    const double between_messages = mean_over_runs(c, &RunData::between_messages);
    const double shared = mean_over_runs(c, &RunData::between_shared_bytes);
    table.add_row({c.label, fixed(messages - between_messages, 1), human_bytes(bytes - between_bytes),
                   fixed(between_messages, 1), human_bytes(between_bytes), percent(between_bytes / bytes),
                   human_bytes(shared)});
    table.about({.configuration = &c});
    table.csv.rows.push_back({c.label, raw_number(messages - between_messages), raw_number(bytes - between_bytes),
                              raw_number(between_messages), raw_number(between_bytes), raw_number(shared)});
  }
  if (table.rows.empty()) return std::nullopt;
  return Section{"Bytes per link kind",
                 "Runs on islands (network = cluster { }, docs/network-model.md, \"Islands\"): mean messages and bytes "
                 "per step and worker rank on the links inside islands and on those between them (messages - "
                 "between_messages and link_bytes - between_link_bytes, then between_messages and "
                 "between_link_bytes; per message the larger of its two directions). In a collective, every "
                 "message of a phase in which some rank's message crosses islands counts as between: the phase "
                 "lasts as long as its slowest message. Share between = bytes between / all bytes. The link between "
                 "carried = between_shared_bytes: the phases' bytes times their load, the messages that shared an "
                 "island's link at once (what is projected onto it). Configurations on one link are not listed.",
                 {std::move(table)},
                 {}};
}

}  // namespace laconic::reports
