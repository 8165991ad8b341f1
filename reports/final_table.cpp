// Sections 1 and 2: the final-metric grid and the metric against the achieved compression.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {

Section final_metric_section(const SectionInput& in) {
  Table table;
  table.slug = "final_metric";
  table.columns.push_back({"configuration"});
  for (const auto& column : in.grid.columns) table.columns.push_back({column, Align::Right});
  table.csv.header = {"row", "column", "mean", "std", "n"};
  for (const auto& row : in.grid.rows) {
    std::vector<std::string> cells{row};
    for (const auto& column : in.grid.columns) {
      const Configuration* c = in.grid.find(row, column);
      if (c == nullptr) {
        cells.push_back(kMissing);
        continue;
      }
      const Stats& s = in.summaries[static_cast<std::size_t>(c - in.grid.configurations.data())].final_metric;
      cells.push_back(mean_std_text(s, in.metric.digits));
      table.csv.rows.push_back({row, column, raw_number(s.mean), raw_number(s.std), std::to_string(s.n)});
    }
    table.add_row(std::move(cells));
  }
  return {"Final " + in.metric.label,
          str_cat("Last recorded ", in.metric.key, " (worker 0; ", in.metric.higher_is_better ? "higher" : "lower",
                  " is better) of the latest FINISHED run of each run name: mean ± sample standard deviation over "
                  "seeds (the repeats of a seed averaged first), n seeds; - where nothing finished. Rows: model x "
                  "workers x the other "
                  "swept variables; columns: compressor x its swept fields."),
          {std::move(table)},
          {}};
}

Section compression_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  Section section{"Final " + in.metric.label + " vs achieved compression",
                  "Achieved compression ratio of a run = sum(bytes_dense) / sum(bytes_sent) over all steps of the "
                  "worker ranks (parameter servers left out): measured bytes handed to Gloo, not a formula. "
                  "Mean over seeds; - where nothing was sent (one worker).",
                  {},
                  {}};
  Table table;
  table.slug = "compression";
  table.columns = {{"configuration"}, {"compression ratio", Align::Right}, {in.metric.label, Align::Right}};
  table.csv.header = {"configuration", "compression_mean", "compression_std", "metric_mean", "metric_std", "n"};
  FigurePlot plot{{"metric_vs_compression", in.metric.label + " vs achieved compression ratio",
                   str_cat("Final ", in.metric.label,
                           " (mean over seeds, bars: sample std) against the achieved "
                           "compression ratio dense / sent bytes (log scale), one point per configuration."),
                   "", ""},
                  "",
                  {}};
  // One series per configuration, named in the key outside the plot: labels next to the points
  // collide once a few configurations have similar ratios.
  std::string plot_list;
  for (std::size_t i = 0; i < in.summaries.size(); ++i) {
    const ConfigSummary& s = in.summaries[i];
    table.add_row({s.config->label, s.compression.n ? fixed(s.compression.mean, 1) + "x" : kMissing,
                   mean_std_text(s.final_metric, in.metric.digits)},
                  {s.config->label, raw_number(s.compression.mean), raw_number(s.compression.std),
                   raw_number(s.final_metric.mean), raw_number(s.final_metric.std), std::to_string(s.final_metric.n)});
    table.about({.configuration = s.config});
    if (std::isnan(s.compression.mean) || std::isnan(s.final_metric.mean)) continue;
    const std::string file = str_cat("compression_", i, ".dat");
    plot.data_files.emplace_back(file, data_line({s.compression.mean, s.final_metric.mean, s.final_metric.std}));
    plot_list +=
        str_cat(plot_list.empty() ? "plot " : ", \\\n     ", "'", file, "' using 1:2:3 with yerrorbars linetype ",
                i % 10 + 1, " pointsize 1.5 title ", gnuplot_quote(s.config->label));
  }
  section.tables.push_back(std::move(table));
  if (plot_list.empty()) {
    section.text += " No run sent any bytes, so there is no figure.";
    return section;
  }
  plot.commands = str_cat("set logscale x\nset xlabel 'achieved compression ratio (dense / sent bytes)'\n",
                          "set ylabel ", gnuplot_quote(in.metric.label), "\n", kKeyBelow,
                          "set grid\nset offsets graph 0.05, graph 0.15, graph 0.05, graph 0.05\n", plot_list, "\n");
  section.figures.push_back(plot.figure);
  plots.push_back(std::move(plot));
  return section;
}

}  // namespace laconic::reports
