// Sections 4 and 5: the test metric over epochs and over time, and the cost of reaching a target.
#include <algorithm>
#include <cmath>

#include "reports/format.hpp"
#include "reports/sections.hpp"

namespace laconic::reports {

Section convergence_section(const SectionInput& in, std::vector<FigurePlot>& plots) {
  Section section{
      "Convergence",
      str_cat("Table: ", in.metric.label,
              " (worker 0) at the end of each epoch (1 = the first), mean over seeds. Measured time = the sum of "
              "worker 0's "
              "epoch_time (wall time of whole epochs on this machine; for ranks placed as threads, their derived "
              "clock) up to that epoch. Projected time = "
              "the sum of worker 0's projected_time_step (measured compute + communication projected onto the link) "
              "up to the epoch's last step; it leaves out evaluation and data loading. Figures: every evaluation "
              "(every epoch's end, and every eval_every steps where the experiment sets it), mean over seeds, against "
              "epochs trained, worker 0's wall time when the evaluated weights were ready (earlier evaluations "
              "included), and projected time."),
      {},
      {}};
  Table table;
  table.slug = "convergence";
  table.columns = {{"configuration"},
                   {"epoch", Align::Right},
                   {in.metric.label, Align::Right},
                   {measured_word(in.summaries, "derived") + " time (s)", Align::Right},
                   {"projected time (s)", Align::Right}};
  table.csv.header = {"configuration",   "epoch",           "metric_mean", "metric_std", "n",
                      "measured_time_s", "projected_time_s"};
  FigurePlot by_epoch{{"convergence_epoch", in.metric.label + " per epoch",
                       in.metric.label + " at every evaluation against the epochs trained (1 = the end of the first "
                                         "epoch), mean over seeds; bars: sample std over seeds.",
                       "", ""},
                      "",
                      {}};
  FigurePlot by_time{{"convergence_time", in.metric.label + " over time: measured and projected",
                      in.metric.label + " at every evaluation against time, mean over seeds (bars: sample std). Left: "
                                        "measured wall time on this machine. Right: projected time on the experiment's "
                                        "link.",
                      "", ""},
                     "",
                     {}};
  std::string epoch_plot, measured_plot, projected_plot;
  for (std::size_t i = 0; i < in.summaries.size(); ++i) {
    const ConfigSummary& s = in.summaries[i];
    for (const EpochSummary& e : s.epochs) {
      table.add_row({s.config->label, std::to_string(e.epoch + 1), mean_std_text(e.metric, in.metric.digits),
                     fixed(e.measured_time, 2), fixed(e.projected_time, 2)},
                    {s.config->label, std::to_string(e.epoch + 1), raw_number(e.metric.mean), raw_number(e.metric.std),
                     std::to_string(e.metric.n), raw_number(e.measured_time), raw_number(e.projected_time)});
      table.about({.configuration = s.config});
    }
    std::string data;
    for (const EvalSummary& e : s.evaluations)
      data += data_line(
          {e.epochs_trained, e.metric.mean, e.measured_time, e.projected_time, e.metric.n > 1 ? e.metric.std : 0.0});
    if (data.empty()) continue;
    const std::string file = str_cat("convergence_", i, ".dat");
    by_epoch.data_files.emplace_back(file, data);
    // Error bars: the sample std over seeds (none with one seed).
    const std::string title = " with yerrorlines title " + gnuplot_quote(s.config->label);
    const auto add = [&](std::string& list, const char* columns) {
      list += str_cat(list.empty() ? "plot " : ", \\\n     ", "'", file, "' using ", columns, title);
    };
    add(epoch_plot, "1:2:5");
    add(measured_plot, "3:2:5");
    add(projected_plot, "4:2:5");
  }
  section.tables.push_back(std::move(table));
  if (epoch_plot.empty()) return section;
  by_time.data_files = by_epoch.data_files;  // the same files; writing them twice is harmless
  const std::string common = str_cat("set ylabel ", gnuplot_quote(in.metric.label), "\nset grid\n");
  by_epoch.commands = str_cat(common, kKeyBelow, "set xlabel 'epochs trained'\n", epoch_plot, "\n");
  const std::string measured = measured_word(in.summaries, "derived");
  by_time.commands = str_cat("set multiplot layout 1,2\n", common, kKeyBelow, "set title ",
                             gnuplot_quote(measured + " time"),
                             "\nset xlabel ", gnuplot_quote(measured + " wall time (s)"), "\n", measured_plot, "\n",
                             "set title 'PROJECTED time'\nset xlabel 'projected time on the link (s)'\n",
                             projected_plot, "\nunset multiplot\n");
  section.figures = {by_epoch.figure, by_time.figure};
  plots.push_back(std::move(by_epoch));
  plots.push_back(std::move(by_time));
  return section;
}

namespace {

Section target_intro(const SectionInput& in, bool one, const std::string& direction) {
  const RowTarget& first = in.answer.targets().front();
  return Section{
      "Time and bytes to target",
      str_cat(one ? str_cat("Target ", in.metric.label, " ", direction, fixed(first.value, in.metric.digits), " (",
                            first.source, ").")
                  : str_cat("Each row has its own target (column target): its baseline's mean "
                            "final ",
                            in.metric.label, " ", in.metric.higher_is_better ? "less" : "plus", " the tolerance."),
              " Per run: the first evaluation whose ", in.metric.label,
              " reaches the target (every epoch's end, and every eval_every steps where the run set it), the "
              "steps and epoch it came in (1 = the first epoch; a range when the runs differ), the measured time "
              "(worker 0's wall time, or a thread rank's derived clock, since "
              "training started, earlier evaluations included) and the bytes the worker ranks sent until then; "
              "then mean ± std over the runs that reached it. Time to target on the runs' link: the answer's "
              "(steps x the step on that link, geometric mean with its 95% interval; \"The answer\"), with the "
              "link beside it. reached = runs reaching it / runs. best reached = mean ± std over the runs of each "
              "run's best ",
              in.metric.label, "."),
      {},
      {}};
}

Table target_table(bool one, const std::vector<ConfigSummary>& summaries) {
  Table table;
  table.slug = "time_to_target";
  table.columns = {{"configuration"},
                   {"reached", Align::Right},
                   {"best reached", Align::Right},
                   {"steps", Align::Right},
                   {"epoch", Align::Right},
                   {measured_word(summaries, "derived") + " time (s)", Align::Right},
                   {"time to target on the runs' link (projected)", Align::Right},
                   {"bytes sent", Align::Right}};
  table.csv.header = {"configuration",
                      "runs_reached",
                      "runs",
                      "best_mean",
                      "best_std",
                      "steps_mean",
                      "epoch_mean",
                      "measured_time_mean_s",
                      "measured_time_std_s",
                      "link",
                      "time_s",
                      "time_low_s",
                      "time_high_s",
                      "bytes_sent_mean"};
  if (!one) {
    table.columns.insert(table.columns.begin() + 1, {"target", Align::Right});
    table.csv.header.insert(table.csv.header.begin() + 1, "target");
  }
  return table;
}

// Where a configuration's runs first reached the target (one entry per run that did), and each
// run's best metric.
struct Reach {
  std::vector<double> steps, epochs, measured, bytes, best;
};

Reach reach_of(const ConfigSummary& s, double target, const TestMetric& metric) {
  Reach r;
  for (const RunData* run : s.config->runs) {
    r.best.push_back(run->best_metric(metric.higher_is_better));
    for (const EvalPoint& e : run->evaluations)
      if (metric.reaches(e.test_metric, target)) {
        r.steps.push_back(static_cast<double>(e.step));
        r.epochs.push_back(static_cast<double>(e.epoch + 1));
        r.measured.push_back(e.measured_time);
        r.bytes.push_back(e.bytes_sent);
        break;
      }
  }
  return r;
}

// The row of a configuration: its cells, and the raw numbers of its CSV line.
std::pair<std::vector<std::string>, std::vector<std::string>> target_row(const ConfigSummary& s, const Reach& r,
                                                                         const Answer& answer) {
  const TestMetric& metric = answer.metric();
  const AnswerLink link = answer.own_link(s);
  const TimeToTarget t = answer.time_to_target(s, link);
  const std::string& label = s.config->label;
  const std::string runs = std::to_string(s.config->runs.size());
  const std::string reached = str_cat(r.epochs.size(), "/", runs);
  const Stats best = stats_of(r.best);
  const std::string best_text = mean_std_text(best, metric.digits);
  if (r.epochs.empty())
    return {{label, reached, best_text, "not reached", kMissing, kMissing, kMissing, kMissing},
            {label, "0", runs, raw_number(best.mean), raw_number(best.std), "", "", "", "", link.name, "", "", "", ""}};
  const Stats step = stats_of(r.steps), epoch = stats_of(r.epochs), m = stats_of(r.measured), b = stats_of(r.bytes);
  // The epochs of the runs as a range: a mean such as "1.5" names no epoch.
  const auto [low, high] = std::minmax_element(r.epochs.begin(), r.epochs.end());
  const std::string epoch_text = *low == *high ? fixed(*low, 0) : str_cat(fixed(*low, 0), "-", fixed(*high, 0));
  return {{label, reached, best_text, fixed(step.mean, 0), epoch_text, mean_std_significant(m),
           str_cat(time_text(t), " on ", link.name), human_bytes(b.mean)},
          {label, std::to_string(r.epochs.size()), runs, raw_number(best.mean), raw_number(best.std),
           raw_number(step.mean), raw_number(epoch.mean), raw_number(m.mean), raw_number(m.std), link.name,
           raw_number(t.seconds), raw_number(t.low), raw_number(t.high), raw_number(b.mean)}};
}

}  // namespace

Section target_section(const SectionInput& in) {
  const std::string direction = in.metric.higher_is_better ? ">= " : "<= ";
  const bool one = in.answer.one_target();
  Section section = target_intro(in, one, direction);
  Table table = target_table(one, in.summaries);
  std::size_t reached_runs = 0, runs = 0;
  double best_overall = kNaN;
  std::string best_label;
  for (const ConfigSummary& s : in.summaries) {
    const double target = in.answer.target_of(s).value;
    const Reach reach = reach_of(s, target, in.metric);
    reached_runs += reach.epochs.size();
    runs += s.config->runs.size();
    const double best = stats_of(reach.best).mean;
    if (in.metric.better(best, best_overall)) {
      best_overall = best;
      best_label = s.config->label;
    }
    auto [cells, raw] = target_row(s, reach, in.answer);
    if (!one) {
      cells.insert(cells.begin() + 1, fixed(target, in.metric.digits));
      raw.insert(raw.begin() + 1, raw_number(target));
    }
    table.add_row(std::move(cells), std::move(raw));
    table.about({.configuration = s.config});
  }
  if (reached_runs == 0 && runs > 0)
    section.lead = str_cat(
        "No run reached the target",
        one ? str_cat(" ", in.metric.label, " ", direction, fixed(in.answer.targets().front().value, in.metric.digits))
            : std::string(),
        best_label.empty()
            ? std::string(".")
            : str_cat("; the best mean reached was ", fixed(best_overall, in.metric.digits), " (", best_label, ")."));
  else
    section.lead = str_cat(reached_runs, " of ", runs, " runs reached it.");
  section.tables.push_back(std::move(table));
  return section;
}

}  // namespace laconic::reports
