// Sections 4 and 5: the test metric over epochs and over time, and the cost of reaching a target.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {

Section convergence_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  Section section{
      "Convergence",
      str_cat(in.metric.label, " (worker 0) at the end of each epoch, mean over seeds. Measured time = the sum of "
                               "worker 0's epoch_time (wall time of whole epochs on this machine, evaluation "
                               "included) up to that epoch. Projected time = the sum of worker 0's "
                               "projected_time_step (measured compute + communication projected onto the link) up "
                               "to the epoch's last step; it leaves out evaluation and data loading."),
      {},
      {}};
  Table table;
  table.slug = "convergence";
  table.columns = {{"configuration"},
                   {"epoch", Align::Right},
                   {in.metric.label, Align::Right},
                   {"measured time (s)", Align::Right},
                   {"projected time (s)", Align::Right}};
  table.csv.header = {"configuration", "epoch", "metric_mean", "metric_std", "n", "measured_time_s",
                      "projected_time_s"};
  FigurePlot by_epoch{{"convergence_epoch", in.metric.label + " per epoch",
                       in.metric.label + " at the end of each epoch (counted from 0), mean over seeds.", "", ""},
                      "",
                      {}};
  FigurePlot by_time{{"convergence_time", in.metric.label + " over time: measured and projected",
                      in.metric.label + " against cumulative time, mean over seeds. Left: measured wall time on this "
                                        "machine. Right: projected time on the experiment's link.",
                      "", ""},
                     "",
                     {}};
  std::string epoch_plot, measured_plot, projected_plot;
  for (std::size_t i = 0; i < in.summaries.size(); ++i) {
    const ConfigSummary& s = in.summaries[i];
    std::string data;
    for (const EpochSummary& e : s.epochs) {
      table.add_row({s.config->label, std::to_string(e.epoch), mean_std_text(e.metric, in.metric.digits),
                     fixed(e.measured_time, 2), fixed(e.projected_time, 2)},
                    {s.config->label, std::to_string(e.epoch), raw_number(e.metric.mean), raw_number(e.metric.std),
                     std::to_string(e.metric.n), raw_number(e.measured_time), raw_number(e.projected_time)});
      data += data_line({static_cast<double>(e.epoch), e.metric.mean, e.measured_time, e.projected_time});
    }
    if (data.empty()) continue;
    const std::string file = str_cat("convergence_", i, ".dat");
    by_epoch.data_files.emplace_back(file, data);
    const std::string title = " with linespoints title " + gnuplot_quote(s.config->label);
    const auto add = [&](std::string& list, const char* columns) {
      list += str_cat(list.empty() ? "plot " : ", \\\n     ", "'", file, "' using ", columns, title);
    };
    add(epoch_plot, "1:2");
    add(measured_plot, "3:2");
    add(projected_plot, "4:2");
  }
  section.tables.push_back(std::move(table));
  if (epoch_plot.empty()) return section;
  by_time.data_files = by_epoch.data_files;  // the same files; writing them twice is harmless
  const std::string common = str_cat("set ylabel ", gnuplot_quote(in.metric.label), "\nset grid\nset key ",
                                     in.metric.higher_is_better ? "bottom right" : "top right", "\n");
  by_epoch.commands = str_cat(common, "set xlabel 'epoch'\n", epoch_plot, "\n");
  by_time.commands = str_cat("set multiplot layout 1,2\n", common, "set title 'MEASURED time'\n",
                             "set xlabel 'measured wall time (s)'\n", measured_plot, "\n",
                             "set title 'PROJECTED time'\nset xlabel 'projected time on the link (s)'\n",
                             projected_plot, "\nunset multiplot\n");
  section.figures = {by_epoch.figure, by_time.figure};
  plots.push_back(std::move(by_epoch));
  plots.push_back(std::move(by_time));
  return section;
}

double default_target(const SectionInput& in) {
  double target = kNaN;
  for (const ConfigSummary& s : in.summaries) {
    const double v = s.final_metric.mean;
    if (std::isnan(v)) continue;
    if (std::isnan(target) || (in.metric.higher_is_better ? v < target : v > target)) target = v;
  }
  return target;
}

Section target_section(const SectionInput& in, double target, bool target_given) {
  Section section{
      "Time and bytes to target",
      str_cat("Target ", in.metric.label, " ", in.metric.higher_is_better ? ">= " : "<= ",
              fixed(target, in.metric.digits),
              target_given ? " (--target)."
                           : " (default: the least good mean final value among the configurations; set it "
                             "with --target).",
              " Per run: the first epoch whose ", in.metric.label,
              " reaches the target, the measured and projected time up to the end of that epoch (as in "
              "Convergence) and the bytes the worker ranks sent until then; then mean ± std over the runs that "
              "reached it. reached = runs reaching it / runs."),
      {},
      {}};
  Table table;
  table.slug = "time_to_target";
  table.columns = {{"configuration"},
                   {"reached", Align::Right},
                   {"epoch", Align::Right},
                   {"measured time (s)", Align::Right},
                   {"projected time (s)", Align::Right},
                   {"bytes sent", Align::Right}};
  table.csv.header = {"configuration", "runs_reached", "runs",     "epoch_mean", "measured_time_mean_s",
                      "measured_time_std_s", "projected_time_mean_s", "projected_time_std_s", "bytes_sent_mean"};
  for (const ConfigSummary& s : in.summaries) {
    std::vector<double> epochs, measured, projected, bytes;
    for (const RunData* run : s.config->runs)
      for (const EpochPoint& e : run->epochs)
        if (in.metric.reaches(e.test_metric, target)) {
          epochs.push_back(static_cast<double>(e.epoch));
          measured.push_back(e.measured_time);
          projected.push_back(e.projected_time);
          bytes.push_back(e.bytes_sent);
          break;
        }
    const std::string reached = str_cat(epochs.size(), "/", s.config->runs.size());
    const Stats epoch = stats_of(epochs), m = stats_of(measured), p = stats_of(projected), b = stats_of(bytes);
    if (epochs.empty())
      table.add_row({s.config->label, reached, "not reached", kMissing, kMissing, kMissing},
                    {s.config->label, "0", std::to_string(s.config->runs.size()), "", "", "", "", "", ""});
    else
      table.add_row({s.config->label, reached, fixed(epoch.mean, 1), mean_std_significant(m),
                     mean_std_significant(p), human_bytes(b.mean)},
                    {s.config->label, std::to_string(epochs.size()), std::to_string(s.config->runs.size()),
                     raw_number(epoch.mean), raw_number(m.mean), raw_number(m.std), raw_number(p.mean),
                     raw_number(p.std), raw_number(b.mean)});
  }
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
