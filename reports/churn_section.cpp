// "Workers that leave and join": the report's section on churn, from each run's MemberChange
// rows (reports/churn.hpp).
#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// "2, 3" in a table ("-" for none), "2 3" in a CSV ("" for none).
std::string ranks_text(const std::vector<int>& ranks, bool csv = false) {
  std::string text;
  for (int r : ranks) text += str_cat(text.empty() ? "" : csv ? " " : ", ", r);
  return text.empty() && !csv ? kMissing : text;
}

struct Totals {
  std::size_t leaves = 0, joins = 0;
  std::int64_t fewest = 0;
  double bytes = 0, measured = 0, projected = 0;
};

Totals totals_of(const RunData& run) {
  Totals t;
  t.fewest = run.run.workers;
  for (const MemberChange& c : run.member_changes) {
    t.leaves += c.left.size();
    t.joins += c.joined.size();
    t.fewest = std::min(t.fewest, c.members);
    t.bytes += c.join_bytes;
    if (!c.joined.empty()) t.measured += c.join_seconds;
    t.projected += run.run.link ? c.projected_seconds(*run.run.link) : kNaN;
  }
  if (t.joins == 0) t.measured = kNaN;  // nothing handed over, nothing timed
  return t;
}

std::vector<const ReportRun*> all_runs(const Grid& grid) {
  std::vector<const ReportRun*> runs;
  for (const Configuration& c : grid.configurations)
    for (const RunData* run : c.runs) runs.push_back(&run->run);
  return runs;
}

const RunData* data_of(const Grid& grid, const ReportRun* run) {
  for (const Configuration& c : grid.configurations)
    for (const RunData* data : c.runs)
      if (&data->run == run) return data;
  return nullptr;
}

// "2 leaves and 2 joins, at least 3 of 4 workers present; the joiners' state (77.0 KB) took
// 0.0120 s here, 0.0006 s projected onto 1Gbit; test accuracy 0.9100 against 0.9200 in the calm run."
std::string churn_lead(const RunData& run, const Totals& t, const RunData* calm, const TestMetric& metric) {
  std::string line = str_cat(run.run.name, ": ", t.leaves, " leaves and ", t.joins, " joins, at least ", t.fewest,
                             " of ", run.run.workers, " workers present");
  if (t.joins > 0)
    line += str_cat("; handing the joiners their state (", human_bytes(t.bytes), ") took ", seconds(t.measured),
                    " s measured, ", seconds(t.projected), " s projected onto ", run.run.network);
  line += str_cat("; ", metric.label, " ", fixed(run.final_metric, metric.digits));
  if (calm != nullptr)
    line += str_cat(" against ", fixed(calm->final_metric, metric.digits), " in the calm run of its seed");
  return line + ".";
}

Table summary_table(const SectionInput& in, std::string& lead) {
  Table table;
  table.slug = "churn";
  table.columns = {{"run"},
                   {"leaves", Align::Right},
                   {"joins", Align::Right},
                   {"fewest present", Align::Right},
                   {"state handed over", Align::Right},
                   {"hand-over, measured (s)", Align::Right},
                   {"hand-over, projected (s)", Align::Right},
                   {in.metric.label, Align::Right},
                   {"calm run, same seed", Align::Right}};
  table.csv.header = {"run",
                      "leaves",
                      "joins",
                      "fewest_members",
                      "join_bytes",
                      "join_seconds",
                      "join_projected_seconds",
                      "final_metric",
                      "calm_final_metric"};
  const std::vector<const ReportRun*> runs = all_runs(in.grid);
  for (const Configuration& c : in.grid.configurations)
    for (const RunData* run : c.runs) {
      if (run->member_changes.empty()) continue;
      const Totals t = totals_of(*run);
      const ReportRun* twin = calm_twin(run->run, runs);
      const RunData* calm = twin ? data_of(in.grid, twin) : nullptr;
      const double calm_metric = calm ? calm->final_metric : kNaN;
      table.add_row(
          {run->run.name, str_cat(t.leaves), str_cat(t.joins), str_cat(t.fewest, " of ", run->run.workers),
           human_bytes(t.bytes), seconds(t.measured), seconds(t.projected), fixed(run->final_metric, in.metric.digits),
           fixed(calm_metric, in.metric.digits)},
          {run->run.name, str_cat(t.leaves), str_cat(t.joins), str_cat(t.fewest), raw_number(t.bytes),
           raw_number(t.measured), raw_number(t.projected), raw_number(run->final_metric), raw_number(calm_metric)});
      table.about({&c, run->run.id});
      if (table.rows.size() <= 3) lead += (lead.empty() ? "" : "\n\n") + churn_lead(*run, t, calm, in.metric);
    }
  return table;
}

Table changes_table(const SectionInput& in) {
  Table table;
  table.slug = "churn_changes";
  table.columns = {{"run"},
                   {"step", Align::Right},
                   {"left"},
                   {"joined"},
                   {"present", Align::Right},
                   {"state handed over", Align::Right},
                   {"hand-over, measured (s)", Align::Right},
                   {"hand-over, projected (s)", Align::Right},
                   {"detect (s)", Align::Right},
                   {"regroup (s)", Align::Right}};
  table.csv.header = {"run",
                      "step",
                      "left",
                      "joined",
                      "members",
                      "join_bytes",
                      "join_seconds",
                      "join_projected_seconds",
                      "detect_seconds",
                      "regroup_seconds"};
  for (const Configuration& c : in.grid.configurations)
    for (const RunData* run : c.runs)
      for (const MemberChange& m : run->member_changes) {
        const double projected = run->run.link ? m.projected_seconds(*run->run.link) : kNaN;
        table.add_row({run->run.name, str_cat(m.step), ranks_text(m.left), ranks_text(m.joined), str_cat(m.members),
                       human_bytes(m.join_bytes), seconds(m.join_seconds), seconds(projected),
                       seconds(m.detect_seconds), seconds(m.regroup_seconds)},
                      {run->run.name, str_cat(m.step), ranks_text(m.left, true), ranks_text(m.joined, true),
                       str_cat(m.members), raw_number(m.join_bytes), raw_number(m.join_seconds), raw_number(projected),
                       raw_number(m.detect_seconds), raw_number(m.regroup_seconds)});
        table.about({&c, run->run.id});
      }
  return table;
}

}  // namespace

std::optional<Section> churn_section(const SectionInput& in) {
  std::string lead;
  Table summary = summary_table(in, lead);
  if (summary.rows.empty()) return std::nullopt;
  return Section{
      "Workers that leave and join",
      "From the rows worker 0 records at each step where the workers present change (docs/schema.md: "
      "member_change, members, join_bytes, join_seconds). A worker absent from a step trains and records nothing "
      "for it (its examples of the step go untrained, or to those present under churn_batch = \"global\"); a "
      "joiner takes worker 0's weights and the optimizer state its join names (worker 0's, the run's start's or "
      "the staying workers' mean). State handed over = join_bytes, measured (also in that step's bytes_sent, "
      "projected with its exchange); "
      "hand-over measured = join_seconds, worker 0's wall clock from the change to the end of the check that the "
      "replicas are equal; projected = those bytes on the run's link, two messages per joiner sent one after the "
      "other (the check left out). Calm run, same seed = the run of the same configuration and placement without "
      "churn, where the experiment has one (sweep the churn: churn = sweep { calm(), script { ... } }). In an "
      "elastic run (elastic = true) a worker lost is one that died and a joiner its relaunch; detect = worker 0's "
      "seconds from its failed step's start to the failure it saw, regroup = from then (or, for an admission, the "
      "step's start) until the next generation was connected (detect_seconds, regroup_seconds); those behind the "
      "most advanced worker take its state too, in join_bytes.",
      {std::move(summary), changes_table(in)},
      {},
      lead};
}

}  // namespace laconic::reports
