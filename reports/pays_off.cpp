// Section "Does it pay off?": every configuration's step and time to target projected onto links
// from 10 Mbit/s to 100 Gbit/s, and the bandwidth below which a compressor beats its row's
// the baseline of its row.
#include <cmath>
#include <cstdio>
#include <limits>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {
namespace {

// One configuration on the links: its time to target at each bandwidth (infinite where it did
// not reach it), and where its runs trained on an emulated link, the time measured there.
struct Curve {
  const ConfigSummary* summary = nullptr;
  std::vector<double> time;  ///< s, one per scanned bandwidth
  std::vector<std::string> text;  ///< the same as the answer words it (time_text), one per scanned bandwidth
  double steps_to_target = kNaN;
  /// Where the configuration's runs trained on an emulated link (all of them on the same one):
  /// that link's bandwidth and the time to target measured there (the answer's time on its
  /// runs' steps as they ran: Answer::measured_link).
  double emulated_rate = kNaN, measured_time_to_target = kNaN;
};

Curve pays_off_curve(const Answer& answer, const ConfigSummary& s, const std::vector<double>& rates) {
  Curve c;
  c.summary = &s;
  for (double rate : rates) {
    const TimeToTarget t = answer.time_to_target(s, answer.scanned_link(s, rate));
    c.time.push_back(std::isnan(t.seconds) ? std::numeric_limits<double>::infinity() : t.seconds);
    c.text.push_back(time_text(t));
    c.steps_to_target = t.steps;
  }
  const double rate = s.config->runs.front()->run.emulated_bits_per_second;
  bool same_link = !std::isnan(rate);
  for (const RunData* run : s.config->runs) same_link = same_link && run->run.emulated_bits_per_second == rate;
  if (same_link) {
    c.emulated_rate = rate;
    c.measured_time_to_target = answer.time_to_target(s, Answer::measured_link()).seconds;
  }
  return c;
}

// The figure of one row of the grid: its curves' gnuplot commands and data.
struct RowFigure {
  std::string row;   ///< Configuration::row
  std::string name;  ///< what sets it apart from the other rows, for its title
  std::string plot_list;
  std::vector<std::pair<std::string, std::string>> data_files;
  std::size_t curves = 0;
  bool drew_point = false;
};

/// A row's part of its configurations' legend label: "model=mlp, network.bandwidth=1Gbit" of
/// "model=mlp, network.bandwidth=1Gbit / topk ratio=0.01"; the row itself when the label is the
/// row alone, "" when it is the column alone (a grid of one row).
std::string row_name(const Configuration& c) {
  const std::string suffix = " / " + c.column;
  if (c.label.size() > suffix.size() && c.label.ends_with(suffix))
    return c.label.substr(0, c.label.size() - suffix.size());
  return c.label == c.column ? "" : c.label;
}

Section pays_off_intro(const std::vector<double>& rates) {
  return Section{
      "Does it pay off?",
      str_cat("Each configuration projected onto links from ", rate_text(rates.front()), " to ",
              rate_text(rates.back()),
              " (ten per decade, at the latency and overheads of the runs' own link; 50 us a message where they "
              "name none): step = compute + compress + wait as measured + "
              "the messages each step recorded (messages, link_bytes) by the alpha-beta model; time to target = "
              "the steps each run needed to reach its row's target x that run's step, geometric mean over the runs "
              "that reached it, so a method that needs more steps pays for them; at the runs' own bandwidth it is "
              "the answer's time. Against the baseline: at each bandwidth, the configuration against its row's "
              "baseline, faster, slower, within noise or inconclusive as \"The answer\" says. "
              "Projections, not measurements; runs with allreduce { overlap = true } "
              "are projected as if nothing was hidden. A configuration that trained on an emulated link "
              "(link { emulate = true }) also has its measured time to target there (steps x measured step), a "
              "point on its curve's colour in the figure: how far the point lies from the curve is how far the "
              "model is from the measurement."),
      {},
      {}};
}

/// The latency of the links scanned: "1 ms" when every configuration's runs name the same,
/// else "each row's latency".
std::string scanned_latency(const Answer& answer, const std::vector<ConfigSummary>& summaries) {
  std::string text;
  for (const ConfigSummary& s : summaries) {
    const std::string mine = latency_text(answer.scanned_link(s, 1e9).spec->latency_seconds);
    if (!text.empty() && text != mine) return "each row's latency";
    text = mine;
  }
  return text;
}

Table pays_off_table(bool any_emulated, const std::string& latency) {
  Table table;
  table.slug = "pays_off";
  table.columns = {{"configuration"},
                   {"steps to target", Align::Right},
                   {"time to target on 100 Mbit/s, " + latency, Align::Right},
                   {"on 1 Gbit/s, " + latency, Align::Right},
                   {"on 10 Gbit/s, " + latency, Align::Right},
                   {"against the baseline (time to target)"}};
  table.csv.header = {"configuration",          "steps_to_target",         "time_to_target_100Mbit_s",
                      "time_to_target_1Gbit_s", "time_to_target_10Gbit_s", "against_baseline",
                      "break_even_bit_s",       "crossover_bit_s"};
  if (any_emulated) {
    table.columns.push_back({"measured on its emulated link (s)", Align::Right});
    table.csv.header.insert(table.csv.header.end(), {"emulated_bandwidth_bit_s", "measured_time_to_target_s"});
  }
  return table;
}

// The index of the scanned bandwidth nearest `rate`.
std::size_t nearest(const std::vector<double>& rates, double rate) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < rates.size(); ++i)
    if (std::fabs(std::log(rates[i] / rate)) < std::fabs(std::log(rates[best] / rate))) best = i;
  return best;
}

void add_row(Table& table, const Curve& c, const BandwidthScan& scan, const std::vector<double>& rates,
             bool any_emulated) {
  const std::string& label = c.summary->config->label;
  const auto ttt = [&](double rate) {
    const double t = c.time[nearest(rates, rate)];
    return std::isinf(t) ? kNaN : t;
  };
  const auto text = [&](double rate) { return c.text[nearest(rates, rate)]; };
  std::vector<std::string> row = {
      label,      std::isnan(c.steps_to_target) ? std::string("not reached") : fixed(c.steps_to_target, 0),
      text(1e8),  text(1e9),
      text(1e10), scan.text};
  std::vector<std::string> raw = {label,
                                  raw_number(c.steps_to_target),
                                  raw_number(ttt(1e8)),
                                  raw_number(ttt(1e9)),
                                  raw_number(ttt(1e10)),
                                  scan.text,
                                  raw_number(scan.break_even),
                                  raw_number(scan.crossover)};
  if (any_emulated) {
    row.push_back(std::isnan(c.emulated_rate)
                      ? kMissing
                      : str_cat(seconds(c.measured_time_to_target), " on ", rate_text(c.emulated_rate)));
    raw.insert(raw.end(), {raw_number(c.emulated_rate), raw_number(c.measured_time_to_target)});
  }
  table.add_row(std::move(row), std::move(raw));
  table.about({.configuration = c.summary->config});
}

// One figure per row of the grid (a model on a link, ...), its curves named by their column
// (the compressor): thirty configurations in one figure leave no room for the plot.
RowFigure& figure_of(std::vector<RowFigure>& figures, const Configuration& config) {
  for (RowFigure& f : figures)
    if (f.row == config.row) return f;
  figures.push_back({config.row, row_name(config), "", {}, 0, false});
  return figures.back();
}

// Curve `c` (the k-th) in its row's figure, with its measured point when it has one.
void add_curve(RowFigure& f, const Curve& c, std::size_t k, const std::vector<double>& rates) {
  std::string data;
  for (std::size_t i = 0; i < rates.size(); ++i) data += data_line({rates[i] / 1e6, c.time[i]});
  const std::string file = str_cat("pays_off_", k, ".dat");
  f.data_files.emplace_back(file, data);
  const std::size_t style = ++f.curves;  // the curve and its measured point share it
  f.plot_list += str_cat(f.plot_list.empty() ? "plot " : ", \\\n     ", "'", file, "' using 1:2 with lines linetype ",
                         style, " linewidth 2 title ", gnuplot_quote(c.summary->config->column));
  if (std::isnan(c.emulated_rate)) return;
  f.drew_point = true;
  const std::string point = str_cat("pays_off_", k, "_measured.dat");
  f.data_files.emplace_back(point, data_line({c.emulated_rate / 1e6, c.measured_time_to_target}));
  f.plot_list += str_cat(", \\\n     '", point, "' using 1:2 with points pointtype 7 linecolor ", style, " notitle");
}

void draw_figures(std::vector<RowFigure>& figures, const std::string& metric_label, Section& section,
                  std::vector<FigurePlot>& plots) {
  for (std::size_t i = 0; i < figures.size(); ++i) {
    RowFigure& f = figures[i];
    if (f.drew_point)  // one key entry for every measured point
      f.plot_list +=
          ", \\\n     NaN with points pointtype 7 linecolor rgb 'black' title 'measured on its emulated link'";
    const bool one = figures.size() == 1;
    FigurePlot plot{{one ? std::string("pays_off") : str_cat("pays_off_", i + 1),
                     str_cat("Does it pay off? Time to target against bandwidth", one ? "" : ": " + f.name),
                     str_cat("Projected seconds until the ", metric_label,
                             " target (steps needed x projected step) on links from 10 Mbit/s to 100 Gbit/s, log "
                             "scales; a curve per configuration that reached the target",
                             one ? "" : str_cat(" (", f.name, ")"), ". Points: measured on an emulated link."),
                     "", ""},
                    str_cat("set logscale xy\nset xlabel 'link bandwidth (Mbit/s)'\nset ylabel 'seconds to target "
                            "(projected)'\nset grid\n", kKeyBelow,
                            f.plot_list, "\n"),
                    std::move(f.data_files)};
    section.figures.push_back(plot.figure);
    plots.push_back(std::move(plot));
  }
}

}  // namespace

Section pays_off_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  const std::vector<double> rates = scanned_bandwidths();
  Section section = pays_off_intro(rates);
  std::vector<Curve> curves;
  std::size_t without = 0;
  for (const ConfigSummary& s : in.summaries) {
    if (std::isnan(s.messages.mean) || std::isnan(s.link_bytes.mean)) {
      ++without;
      continue;
    }
    curves.push_back(pays_off_curve(in.answer, s, rates));
  }
  if (without > 0)
    section.lead += str_cat(without,
                            " configuration(s) left out: their runs did not record messages and "
                            "link_bytes (an older laconic).");
  section.text += thread_ranks_note(in.summaries);
  bool any_emulated = false;
  for (const Curve& c : curves) any_emulated = any_emulated || !std::isnan(c.emulated_rate);
  Table table = pays_off_table(any_emulated, scanned_latency(in.answer, in.summaries));
  std::vector<RowFigure> figures;
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const Curve& c = curves[k];
    add_row(table, c, in.answer.scan(*c.summary), rates, any_emulated);
    if (!std::isnan(c.steps_to_target)) add_curve(figure_of(figures, *c.summary->config), c, k, rates);
  }
  section.tables.push_back(std::move(table));
  if (figures.empty()) {
    section.lead +=
        (section.lead.empty() ? "" : " ") + std::string("No configuration reached the target: nothing to plot.");
    return section;
  }
  draw_figures(figures, in.metric.label, section, plots);
  return section;
}

}  // namespace laconic::reports
