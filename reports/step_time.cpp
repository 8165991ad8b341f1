// Section 3: where a step's time goes, measured on this machine and projected onto the link.
#include <algorithm>
#include <cmath>
#include <set>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

double or_zero(double value) { return std::isnan(value) ? 0 : value; }

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

Section step_time_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  const std::string links = links_of(in.grid);
  Section section{"Time per step",
                  str_cat("Mean seconds per step and worker rank. compute = forward + backward + optimizer; compress "
                          "= compress + decompress; communicate (measured) = time_communicate, wall time in "
                          "collectives on this machine; communicate (projected) = projected_time_communicate, the "
                          "same messages on the experiment's link (", links,
                          ") by the alpha-beta model: a projection, not a measurement. "
                          "Step (projected) = compute + compress + projected communicate."),
                  {},
                  {}};
  Table table;
  table.slug = "step_time";
  table.columns = {{"configuration"},
                   {"compute (s)", Align::Right},
                   {"compress (s)", Align::Right},
                   {"communicate, measured (s)", Align::Right},
                   {"communicate, projected (s)", Align::Right},
                   {"step, measured (s)", Align::Right},
                   {"step, projected (s)", Align::Right}};
  table.csv.header = {"configuration", "compute_s", "compress_s", "communicate_measured_s",
                      "communicate_projected_s", "step_measured_s", "step_projected_s", "n"};
  std::string data;
  std::vector<std::string> labels;
  double highest = 0;
  bool any_projected = false;
  for (const ConfigSummary& s : in.summaries) {
    const double compute = s.compute.mean, compress = s.compress.mean;
    const double measured = s.communicate.mean, projected = s.projected_communicate.mean;
    const double step_measured = or_zero(compute) + or_zero(compress) + or_zero(measured);
    const double step_projected = std::isnan(projected) ? kNaN : or_zero(compute) + or_zero(compress) + projected;
    table.add_row({s.config->label, seconds(compute), seconds(compress), seconds(measured), seconds(projected),
                   seconds(step_measured), seconds(step_projected)},
                  {s.config->label, raw_number(compute), raw_number(compress), raw_number(measured),
                   raw_number(projected), raw_number(step_measured), raw_number(step_projected),
                   std::to_string(s.compute.n)});
    // Stacked bars need a number in every slot; a missing part draws as 0 and shows as - above.
    data += data_line({or_zero(compute), or_zero(compress), or_zero(measured), or_zero(projected)});
    labels.push_back(s.config->label);
    highest = std::max({highest, step_measured, or_zero(step_projected)});
    any_projected = any_projected || !std::isnan(projected);
  }
  section.tables.push_back(std::move(table));
  if (labels.empty()) return section;

  FigurePlot plot{{"step_time", "Time per step: measured and projected",
                   str_cat("Seconds per step and worker, stacked: compute, compress, communicate. Left: communicate "
                           "as measured on this machine. Right: communicate as projected onto ",
                           links, " (compute and compress measured in both)."),
                   "", ""},
                  "",
                  {{"step_time.dat", data}}};
  const std::string bars = "plot 'step_time.dat' using 1 title 'compute', '' using 2 title 'compress', ";
  plot.commands = str_cat(
      "set multiplot layout 1,2\nset style data histograms\nset style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\nset boxwidth 0.7\nset key top left\nset grid ytics\n",
      "set ylabel 'seconds per step'\nset yrange [0:", raw_number(highest > 0 ? highest * 1.25 : 1), "]\n",
      xtics_command(labels), "set title 'MEASURED on this machine'\n", bars,
      "'' using 3 title 'communicate (measured)'\n",
      "set title ", gnuplot_quote("PROJECTED onto " + links), "\n", bars,
      "'' using 4 title 'communicate (projected)'\nunset multiplot\n");
  if (!any_projected) section.text += " No run recorded projected times; the right panel shows none.";
  section.figures.push_back(plot.figure);
  plots.push_back(std::move(plot));
  return section;
}

}  // namespace laconic::reports
