// Section 3: where a step's time goes, measured on this machine and projected onto the link.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// The link(s) the projected times are for, as the configs name them.
std::string links_of(const Grid& grid) {
  std::set<std::string> links;
  for (const auto& c : grid.configurations)
    for (const RunData* run : c.runs) links.insert(run->run.network.empty() ? "the run's link" : run->run.network);
  std::string out;
  for (const auto& link : links) out += (out.empty() ? "" : "; ") + link;
  return out;
}

}  // namespace

namespace {

// The step of `s` against its row's dense baseline `dense`: "+35%", or "-8.1% (noise)" when the
// difference lies within the noise: the 95% intervals over seeds overlap (two or more seeds
// each), else the interquartile ranges over steps overlap.
std::string versus_dense(const ConfigSummary& s, const ConfigSummary& dense) {
  const double a = s.step_median.mean, b = dense.step_median.mean;
  if (std::isnan(a) || std::isnan(b) || b <= 0) return kMissing;
  if (&s == &dense) return "baseline";
  const double change = 100 * (a - b) / b;
  bool noise;
  if (s.step_median.n >= 2 && dense.step_median.n >= 2) {
    const double ha = ci95_half_width(s.step_median), hb = ci95_half_width(dense.step_median);
    noise = a - ha <= b + hb && b - hb <= a + ha;
  } else {
    noise = s.step_q1 <= dense.step_q3 && dense.step_q1 <= s.step_q3;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.1f%%%s", change, noise ? " (noise)" : "");
  return buf;
}

Section step_time_intro(const std::string& links) {
  return Section{
      "Time per step",
      str_cat("Mean seconds per step and worker rank. compute = forward + backward + optimizer; compress = compress + "
              "decompress; wait = time_wait, blocked at the exchange until the slowest worker arrived (another "
              "worker's compute, not communication); communicate (measured) = time_communicate, wall time in "
              "collectives on this machine once all had arrived; communicate (projected) = "
              "projected_time_communicate, the same messages on the experiment's link (",
              links,
              ") by the alpha-beta model: a projection, not a measurement. Step (projected) = compute + compress + "
              "wait + projected communicate. Compute share = compute / step (projected, else measured): the "
              "compute utilization. Spread: step median [IQR] = the median measured time_step over the "
              "steps of each run and its interquartile range (means over seeds); step over seeds = the mean of the "
              "runs' medians ± the half-width of its 95% interval (Student's t). vs baseline = the step median "
              "against the same row's baseline (\"The answer\"); (noise) marks a difference within the noise: "
              "the 95% intervals overlap (with two or more seeds each), else the interquartile ranges do."),
      {},
      {}};
}

// Where a column for what an overlapped exchange hid behind backward goes (not part of the
// step's sum: it ran while backward did).
constexpr std::size_t kHiddenColumn = 5;

Table step_time_table(bool any_overlapped, const std::vector<ConfigSummary>& summaries) {
  Table table;
  table.slug = "step_time";
  table.columns = {{"configuration"},
                   {"compute (s)", Align::Right},
                   {"compress (s)", Align::Right},
                   {"wait (s)", Align::Right},
                   {"communicate, " + measured_word(summaries, "recorded: projected") + " (s)", Align::Right},
                   {"communicate, projected (s)", Align::Right},
                   {"step, " + measured_word(summaries, "derived") + " (s)", Align::Right},
                   {"step, projected (s)", Align::Right},
                   {"compute share", Align::Right},
                   {"step median [IQR] (s)", Align::Right},
                   {"step over seeds (s)", Align::Right},
                   {"vs baseline", Align::Right}};
  table.csv.header = {"configuration",
                      "compute_s",
                      "compress_s",
                      "wait_s",
                      "communicate_measured_s",
                      "communicate_projected_s",
                      "step_measured_s",
                      "step_projected_s",
                      "step_median_s",
                      "step_q1_s",
                      "step_q3_s",
                      "step_median_ci95_s",
                      "n",
                      "compute_utilization"};
  if (any_overlapped) {
    table.columns.insert(table.columns.begin() + kHiddenColumn, {"hidden behind backward (s)", Align::Right});
    table.csv.header.insert(table.csv.header.begin() + kHiddenColumn, "hidden_behind_backward_s");
  }
  return table;
}

// "topk (compute +35%)" when a configuration's compute differs by more than 10% from its row's
// dense one (no compressor changes forward, backward or the optimizer: the machine disturbed it);
// else "".
std::string disturbance(const ConfigSummary& s, const ConfigSummary& dense) {
  const double base = dense.compute.mean;
  if (&s == &dense || !(base > 0) || std::fabs(s.compute.mean - base) <= 0.1 * base) return "";
  char change[32];
  std::snprintf(change, sizeof change, "%+.0f%%", 100 * (s.compute.mean - base) / base);
  return str_cat(s.config->label, " (compute ", change, ")");
}

void add_step_row(Table& table, const ConfigSummary& s, const std::string& versus, bool any_overlapped) {
  const double compute = s.compute.mean, compress = s.compress.mean, wait = s.wait.mean;
  const double measured = s.communicate.mean, projected = s.projected_communicate.mean;
  const double step_measured = measured_step(s);
  const double step_projected = projected_step(s);
  const std::string iqr = std::isnan(s.step_median.mean) ? std::string(kMissing)
                                                         : str_cat(seconds(s.step_median.mean), " [",
                                                                   seconds(s.step_q1), ", ", seconds(s.step_q3), "]");
  std::vector<std::string> cells = {s.config->label,
                                    seconds(compute),
                                    seconds(compress),
                                    seconds(wait),
                                    seconds(measured),
                                    seconds(projected),
                                    seconds(step_measured),
                                    seconds(step_projected),
                                    percent(compute_utilization(s)),
                                    iqr,
                                    mean_ci_text(s.step_median),
                                    versus};
  std::vector<std::string> raw = {s.config->label,
                                  raw_number(compute),
                                  raw_number(compress),
                                  raw_number(wait),
                                  raw_number(measured),
                                  raw_number(projected),
                                  raw_number(step_measured),
                                  raw_number(step_projected),
                                  raw_number(s.step_median.mean),
                                  raw_number(s.step_q1),
                                  raw_number(s.step_q3),
                                  raw_number(ci95_half_width(s.step_median)),
                                  std::to_string(s.compute.n),
                                  raw_number(compute_utilization(s))};
  if (any_overlapped) {
    cells.insert(cells.begin() + kHiddenColumn, seconds(s.overlapped.mean));
    raw.insert(raw.begin() + kHiddenColumn, raw_number(s.overlapped.mean));
  }
  table.add_row(cells, raw);
  table.about({.configuration = s.config});
}

// The configurations whose wait was measured through message stamps (ranks on several hosts),
// each with the worst clock offset error of its runs.
std::string stamped_wait_note(const std::vector<ConfigSummary>& summaries) {
  std::string list;
  for (const ConfigSummary& s : summaries) {
    double worst = kNaN;
    for (const RunData* run : s.config->runs)
      if (!std::isnan(run->facts.clock_offset_error))
        worst = std::isnan(worst) ? run->facts.clock_offset_error : std::max(worst, run->facts.clock_offset_error);
    if (!std::isnan(worst))
      list += str_cat(list.empty() ? "" : ", ", s.config->label, " (clock offsets within ", seconds(worst), " s)");
  }
  if (list.empty()) return "";
  return str_cat(
      " Wait measured on rank 0's clock through estimated clock offsets (ranks on several hosts, or "
      "LACONIC_ARRIVALS=stamps): ",
      list, "; a wait there is off by at most twice that (docs/network-model.md, \"Waiting across hosts\").");
}

// What the section says about runs whose times measure the machine as well as the method.
std::string caveats(const std::vector<ConfigSummary>& summaries, const std::vector<std::string>& disturbed) {
  std::string text, crowded;
  for (const ConfigSummary& s : summaries)
    for (const RunData* run : s.config->runs)
      if (run->facts.oversubscribed) {
        crowded += (crowded.empty() ? "" : ", ") + s.config->label;
        break;
      }
  if (!crowded.empty())
    text += str_cat(
        " Oversubscribed (more ranks than the host has cores; their times include waiting for "
        "a core): ",
        crowded, ".");
  text += stamped_wait_note(summaries);
  if (!disturbed.empty()) {
    std::string list;
    for (const auto& d : disturbed) list += (list.empty() ? "" : ", ") + d;
    text += str_cat(
        " Disturbed by the machine: compute (forward + backward + optimizer, which no compressor "
        "changes) differs by more than 10% from the same row's baseline in ",
        list, "; compare their times with care (docs/reports.md).");
  }
  return text;
}

// The stacked bars, measured on the left and projected on the right.
FigurePlot step_time_figure(const std::string& links, const std::string& data, const std::vector<std::string>& labels,
                            double highest) {
  FigurePlot plot{{"step_time", "Time per step: measured and projected",
                   str_cat("Seconds per step and worker, stacked: compute, compress, wait, communicate. Left: "
                           "communicate as measured on this machine; the whiskers span the interquartile range of "
                           "the measured step over steps, around its median. Right: communicate as projected onto ",
                           links, " (compute, compress and wait measured in both)."),
                   "", ""},
                  "",
                  {{"step_time.dat", data}}};
  const std::string bars =
      "plot 'step_time.dat' using 1 title 'compute', '' using 2 title 'compress', '' using 3 title 'wait', ";
  plot.commands = str_cat(
      "set multiplot layout 1,2\nset style data histograms\nset style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.7\nset key top left\nset grid ytics\n",
      "set ylabel 'seconds per step'\nset yrange [0:", raw_number(highest > 0 ? highest * 1.25 : 1), "]\n",
      xtics_command(labels), "set title 'MEASURED on this machine'\n", bars,
      "'' using 4 title 'communicate (measured)', "
      "'' using 0:6:7:8 with yerrorbars lc rgb 'black' pt 7 ps 0.6 title 'step median, IQR'\n",
      "set title ", gnuplot_quote("PROJECTED onto " + links), "\n", bars,
      "'' using 5 title 'communicate (projected)'\nunset multiplot\n");
  return plot;
}

}  // namespace

Section step_time_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  const std::string links = links_of(in.grid);
  Section section = step_time_intro(links);
  bool any_overlapped = false;
  for (const ConfigSummary& s : in.summaries) any_overlapped = any_overlapped || !std::isnan(s.overlapped.mean);
  if (any_overlapped)
    section.text +=
        " hidden behind backward = time_overlapped: under allreduce { overlap = true }, the part of the "
        "exchange that ran on the communication thread while backward was still going; it is in no other "
        "column and not in the step's sum, which holds only what the step waited for; under diloco { overlap = "
        "tau }, the part of a fragment's projected exchange that the compute of the tau inner steps after it "
        "hid (time_overlap_budget).";
  Table table = step_time_table(any_overlapped, in.summaries);
  std::string data;
  std::vector<std::string> labels, disturbed;
  double highest = 0;
  bool any_projected = false;
  for (const ConfigSummary& s : in.summaries) {
    // The row's dense configuration: its compute is what the model and batch cost on an
    // undisturbed machine, since no compressor changes forward, backward or the optimizer.
    const ConfigSummary* dense = in.answer.target_of(s).baseline;
    std::string versus = dense == nullptr ? std::string(kMissing) : versus_dense(s, *dense);
    if (const std::string d = dense == nullptr ? "" : disturbance(s, *dense); !d.empty()) {
      disturbed.push_back(d);
      versus += " disturbed";
    }
    add_step_row(table, s, versus, any_overlapped);
    const double projected = s.projected_communicate.mean;
    // Stacked bars need a number in every slot; a missing part draws as 0 and shows as - above.
    data += data_line({or_zero(s.compute.mean), or_zero(s.compress.mean), or_zero(s.wait.mean),
                       or_zero(s.communicate.mean), or_zero(projected), s.step_median.mean, s.step_q1, s.step_q3});
    labels.push_back(s.config->label);
    const double step_projected = projected_step(s);
    highest = std::max({highest, measured_step(s), or_zero(step_projected), or_zero(s.step_q3)});
    any_projected = any_projected || !std::isnan(projected);
  }
  section.tables.push_back(std::move(table));
  section.text += caveats(in.summaries, disturbed) + thread_ranks_note(in.summaries);
  if (labels.empty()) return section;
  if (!any_projected) section.text += " No run recorded projected times; the right panel shows none.";
  FigurePlot plot = step_time_figure(links, data, labels, highest);
  section.figures.push_back(plot.figure);
  plots.push_back(std::move(plot));
  return section;
}

}  // namespace laconic::reports
