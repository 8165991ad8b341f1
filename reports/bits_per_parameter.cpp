// Section 6: how many bits per parameter each compressed configuration sent, epoch by epoch.
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {

Section bits_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  Section section{"Bits per parameter",
                  "8 x payload_bytes / model_parameters: the size of a worker's compressed payload per step "
                  "(before the collective) in bits per trainable parameter, mean over the steps of each epoch and "
                  "the worker ranks, then over seeds; epochs count from 1. Dense fp32 is 32 bits. Configurations with "
                  "compressor none "
                  "are left out, and so are runs that did not record model_parameters.",
                  {},
                  {}};
  Table table;
  table.slug = "bits_per_parameter";
  table.columns = {
      {"configuration"}, {"parameters", Align::Right}, {"epoch", Align::Right}, {"bits per parameter", Align::Right}};
  table.csv.header = {"configuration", "parameters", "epoch", "bits_per_parameter"};
  FigurePlot plot{{"bits_per_parameter", "Bits per parameter over training",
                   "8 x payload bytes / trainable parameters per step, mean per epoch and over seeds (log scale); "
                   "the dashed line is dense fp32 (32 bits).",
                   "", ""},
                  "",
                  {}};
  std::string plot_list;
  std::size_t without_parameters = 0;
  for (std::size_t i = 0; i < in.summaries.size(); ++i) {
    const ConfigSummary& s = in.summaries[i];
    if (s.config->runs.front()->full_precision()) continue;  // the dashed line
    double parameters = kNaN;
    for (const RunData* run : s.config->runs)
      if (!std::isnan(run->model_parameters)) parameters = run->model_parameters;
    if (std::isnan(parameters)) {
      ++without_parameters;
      continue;
    }
    std::string data;
    for (const EpochSummary& e : s.epochs) {
      if (std::isnan(e.bits_per_parameter)) continue;
      table.add_row(
          {s.config->label, raw_number(parameters), std::to_string(e.epoch + 1), fixed(e.bits_per_parameter, 3)},
          {s.config->label, raw_number(parameters), std::to_string(e.epoch + 1), raw_number(e.bits_per_parameter)});
      table.about({.configuration = s.config});
      data += data_line({static_cast<double>(e.epoch + 1), e.bits_per_parameter});
    }
    if (data.empty()) continue;
    const std::string file = str_cat("bits_", i, ".dat");
    plot.data_files.emplace_back(file, data);
    plot_list += str_cat(", \\\n     '", file, "' using 1:2 with linespoints title ", gnuplot_quote(s.config->label));
  }
  if (without_parameters > 0)
    section.text += str_cat(" ", without_parameters, " compressed configuration(s) lack model_parameters.");
  section.tables.push_back(std::move(table));
  if (plot_list.empty()) {
    section.text += " Nothing to plot.";
    return section;
  }
  plot.commands =
      str_cat("set logscale y\nset xlabel 'epoch (1 = the first)'\nset ylabel 'bits per parameter'\nset grid\n",
              kKeyBelow, "set yrange [*:64]\n",
              "plot 32 with lines dashtype 2 linecolor rgb 'gray40' title 'dense fp32 (32 bits)'", plot_list, "\n");
  section.figures.push_back(plot.figure);
  plots.push_back(std::move(plot));
  return section;
}

}  // namespace laconic::reports
