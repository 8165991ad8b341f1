#include "advise/advice_check.hpp"

#include <algorithm>
#include <cmath>

#include "reports/format.hpp"
#include "reports/stats.hpp"

namespace laconic::advise {

using namespace reports;  // advise reads the report's model and answer throughout

namespace {

const ConfigSummary* full_of(const ExperimentModel& full, const std::string& column) {
  for (const ConfigSummary& s : full.summaries)
    if (s.config->column == column) return &s;
  return nullptr;
}

void rank_measured(std::vector<CheckRow>& rows) {
  std::vector<CheckRow*> reached;
  for (CheckRow& r : rows)
    if (!std::isnan(r.measured_time)) reached.push_back(&r);
  std::sort(reached.begin(), reached.end(),
            [](const CheckRow* a, const CheckRow* b) { return a->measured_time < b->measured_time; });
  for (std::size_t i = 0; i < reached.size(); ++i) reached[i]->measured_rank = i + 1;
}

}  // namespace

AdviceCheck check_advice(const Advice& advice, const ExperimentModel& full) {
  AdviceCheck out;
  std::vector<double> step_errors;
  const auto add = [&](const AdviceRow& row, std::size_t rank) {
    const ConfigSummary* measured = full_of(full, row.summary->config->column);
    if (measured == nullptr) return;
    // Measured as the advice predicts: each full run's steps to the target x its step as it ran,
    // the geometric mean over the runs that reached it (Answer::time_to_target).
    const AnswerLink as_measured = Answer::measured_link();
    CheckRow c{row.summary->config->column,
               rank,
               0,
               row.step,
               measured_step(*measured),
               row.seconds,
               full.answer->time_to_target(*measured, as_measured).seconds,
               row.low,
               row.high,
               std::nullopt};
    if (!std::isnan(c.predicted_step) && !std::isnan(c.measured_step) && c.measured_step > 0)
      step_errors.push_back(std::abs(c.predicted_step / c.measured_step - 1));
    if (!std::isnan(c.predicted_low) && !std::isnan(c.predicted_high) && !std::isnan(c.measured_time)) {
      c.within = c.predicted_low <= c.measured_time && c.measured_time <= c.predicted_high;
      ++out.with_interval;
      out.within += *c.within ? 1 : 0;
    }
    out.rows.push_back(c);
  };
  for (std::size_t i = 0; i < advice.ranked.size(); ++i) add(advice.ranked[i], i + 1);
  for (const AdviceRow& row : advice.dropped) add(row, 0);
  rank_measured(out.rows);
  out.median_step_error = median_of(step_errors);
  const auto best =
      std::find_if(out.rows.begin(), out.rows.end(), [](const CheckRow& r) { return r.measured_rank == 1; });
  if (best == out.rows.end()) return out;
  out.best = best->candidate;
  if (!out.rows.empty() && out.rows.front().predicted_rank == 1) {
    out.first = out.rows.front().candidate;
    out.regret = out.rows.front().measured_time / best->measured_time - 1;  // NaN if it never reached it
  }
  for (const AdviceRow& row : advice.ranked)
    if (row.baseline)
      for (const CheckRow& c : out.rows)
        if (c.candidate == row.summary->config->column) out.baseline_regret = c.measured_time / best->measured_time - 1;
  return out;
}

Table check_table(const AdviceCheck& check) {
  Table table;
  table.slug = "advice_check";
  table.columns = {{"candidate"},
                   {"rank predicted", Align::Right},
                   {"rank measured", Align::Right},
                   {"step predicted (s)", Align::Right},
                   {"step measured (s)", Align::Right},
                   {"step error", Align::Right},
                   {"time to target predicted (s)", Align::Right},
                   {"time to target measured (s)", Align::Right},
                   {"time error", Align::Right},
                   {"predicted interval (s)", Align::Right},
                   {"measured within", Align::Right}};
  table.csv.header = {"candidate",        "predicted_rank",  "measured_rank",   "predicted_step_s", "measured_step_s",
                      "predicted_time_s", "measured_time_s", "predicted_low_s", "predicted_high_s", "measured_within"};
  const auto rank_text = [](std::size_t r) { return r == 0 ? std::string(kMissing) : std::to_string(r); };
  const auto interval = [](const CheckRow& r) {
    if (std::isnan(r.predicted_low) || std::isnan(r.predicted_high)) return std::string(kMissing);
    return str_cat("[", seconds(r.predicted_low), ", ", seconds(r.predicted_high), "]");
  };
  const auto within = [](const CheckRow& r) { return !r.within ? std::string() : *r.within ? "yes" : "no"; };
  for (const CheckRow& r : check.rows)
    table.add_row(
        {r.candidate, rank_text(r.predicted_rank), rank_text(r.measured_rank), seconds(r.predicted_step),
         seconds(r.measured_step), relative_error(r.predicted_step, r.measured_step), seconds(r.predicted_time),
         seconds(r.measured_time), relative_error(r.predicted_time, r.measured_time), interval(r),
         r.within ? within(r) : std::string(kMissing)},
        {r.candidate, std::to_string(r.predicted_rank), std::to_string(r.measured_rank), raw_number(r.predicted_step),
         raw_number(r.measured_step), raw_number(r.predicted_time), raw_number(r.measured_time),
         raw_number(r.predicted_low), raw_number(r.predicted_high), within(r)});
  return table;
}

}  // namespace laconic::advise
