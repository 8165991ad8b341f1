// "Which rank is slow": the report's section, built from the runs' SlowRank (RunData::slow_rank,
// reports/slow_rank.hpp).
#include <algorithm>
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// "rank 3, +0.0502 s (1.9x)": the slowest rank, its mean over the median rank's in seconds per
// step, and as a ratio where the median is not 0.
std::string phase_cell(const PhaseSlowest& phase) {
  if (phase.rank < 0 || phase.mean <= 0) return kMissing;
  std::string cell = str_cat("rank ", phase.rank, ", +", seconds(phase.mean - phase.median), " s");
  if (!std::isnan(phase.ratio())) cell += str_cat(" (", fixed(phase.ratio(), 2), "x)");
  return cell;
}

// "rank 3 arrived last at 48 of 50 exchanges of compressor=none,seed=1 and caused 91% of its
// waiting; its straggler delay is 5.20x the median rank's"
std::string lead_of(const RunData& run) {
  const SlowRank& s = run.slow_rank;
  std::string line = str_cat("Rank ", s.waited_for, " of ", run.run.name, " arrived last at ", s.arrived_last, " of ",
                             s.exchanges, " exchanges and caused ", percent(s.caused_share), " of the run's waiting");
  // Its phase furthest above the median rank's, in seconds per step.
  const PhaseSlowest* worst = nullptr;
  for (const PhaseSlowest& phase : s.phases)
    if (phase.rank == s.waited_for && phase.mean > phase.median &&
        (worst == nullptr || phase.mean - phase.median > worst->mean - worst->median))
      worst = &phase;
  if (worst != nullptr)
    line += str_cat("; its ", worst->phase, " takes ", seconds(worst->mean), " s a step, the median rank's ",
                    seconds(worst->median), " s");
  return line + ".";
}

}  // namespace

std::optional<Section> slow_rank_section(const SectionInput& in) {
  Table table;
  table.slug = "slow_rank";
  table.columns = {{"run"}, {"waited for most"}, {"its share of the waiting", Align::Right},
                   {"arrived last", Align::Right}};
  table.csv.header = {"run", "waited_for", "caused_share", "caused_seconds", "arrived_last", "waited_exchanges",
                      "exchanges"};
  const std::vector<std::string> phases = slow_rank_phases();
  for (const std::string& phase : phases) {
    table.columns.push_back({"slowest " + phase, Align::Right});
    table.csv.header.push_back(phase + "_rank");
    table.csv.header.push_back(phase + "_vs_median");
  }
  std::string lead;
  for (const Configuration& c : in.grid.configurations)
    for (const RunData* run : c.runs) {
      const SlowRank& s = run->slow_rank;
      if (s.waited_for < 0) continue;
      std::vector<std::string> row = {run->run.name, str_cat("rank ", s.waited_for), percent(s.caused_share),
                                      str_cat(s.arrived_last, " of ", s.exchanges)};
      std::vector<std::string> csv = {run->run.name,           str_cat(s.waited_for),       str_cat(s.caused_share),
                                      str_cat(s.caused_seconds), str_cat(s.arrived_last), str_cat(s.waited_exchanges),
                                      str_cat(s.exchanges)};
      for (const std::string& phase : phases) {
        const auto it =
            std::find_if(s.phases.begin(), s.phases.end(), [&](const PhaseSlowest& p) { return p.phase == phase; });
        const bool shown = it != s.phases.end() && it->mean > 0;
        row.push_back(shown ? phase_cell(*it) : kMissing);
        csv.push_back(shown ? str_cat(it->rank) : "");
        csv.push_back(shown ? str_cat(it->ratio()) : "");
      }
      table.add_row(std::move(row));
      table.about({&c, run->run.id});
      table.csv.rows.push_back(std::move(csv));
      if (table.rows.size() <= 3) lead += (lead.empty() ? "" : "\n\n") + lead_of(*run);
    }
  if (table.rows.empty()) return std::nullopt;
  return Section{
      "Which rank is slow",
      "From each run's per-rank rows. On every exchange whose time_wait each rank recorded, the rank that waited "
      "least arrived last; when the others waited at least 1 ms longer on average, it is the one they waited for, "
      "and their waits are what it cost them. Waited for most = the rank whose last arrivals cost the others the "
      "most waiting over the run; its share of the waiting = that cost over all the waiting the ranks recorded; "
      "arrived last = the exchanges it arrived last at, of those every rank recorded. Slowest per phase = the rank "
      "with the largest mean seconds per step in that phase (forward, backward, optimizer, compress = compress + "
      "decompress, straggler delay = time_delay, the injected sleep of synchronous { stragglers }), and its mean over "
      "the median rank's. Thread ranks' waits are derived from their clocks, processes' measured (docs/schema.md, "
      "time_wait). Only runs with a rank waited for are listed.",
      {std::move(table)},
      {},
      lead};
}

}  // namespace laconic::reports
