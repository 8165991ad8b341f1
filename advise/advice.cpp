#include "advise/advice.hpp"

#include <algorithm>
#include <cmath>

#include "reports/format.hpp"
#include "reports/learning_curve.hpp"

namespace laconic::advise {

using namespace reports;  // advise reads the report's model and answer throughout

namespace {

// Steps to the target as the probes took them, else extrapolated from their curve.
void predict(AdviceRow& row, const Answer& answer) {
  const ConfigSummary& s = *row.summary;
  if (row.time.reached > 0 && !std::isnan(row.time.seconds)) {
    row.basis = StepsBasis::Probe;
    row.steps = row.time.steps;
    row.seconds = row.time.seconds;
    row.low = row.time.low;
    row.high = row.time.high;
    return;
  }
  const CurveTime e = curve_time(answer, s, row.step);
  if (!e.why_not.empty()) {
    row.dropped =
        str_cat("not reached within its probe (", row.time.reached, " of ", row.time.runs, " runs), and ", e.why_not);
    return;
  }
  row.basis = StepsBasis::Curve;
  row.steps = e.steps;
  row.seconds = e.seconds;
  row.low = e.low;
  row.high = e.high;
}

// The answer's link for the advice: the steps with their row's shared compute (the same work for
// every candidate), or on `hardware`.
AnswerLink advised_link(const LinkSpec& link, const HardwareProfile* hardware) {
  return {link.text, link, false, hardware, true};
}

// The configuration's step on `link` (the answer's, with its row's shared compute, or on
// `hardware`); NaN with `missing` set where the hardware cannot cost it.
double step_of(const Answer& answer, const ConfigSummary& s, const LinkSpec& link, const HardwareProfile* hardware,
               std::string* missing) {
  if (hardware != nullptr)
    for (const RunData* run : s.config->runs)
      if (const HardwareStep step = hardware_step(*run, *hardware, link); !step.missing.empty()) {
        if (missing != nullptr) *missing = step.missing;
        return kNaN;
      }
  return answer.step(s, advised_link(link, hardware));
}

AdviceRow row_of(const Answer& answer, const ConfigSummary& s, const LinkSpec& link, const HardwareProfile* hardware) {
  const AnswerLink on = advised_link(link, hardware);
  AdviceRow row;
  row.summary = &s;
  row.candidate = s.config->label;
  row.baseline = answer.is_baseline(s);
  std::string missing;
  row.step = step_of(answer, s, link, hardware, &missing);
  row.time = answer.time_to_target(s, on);
  row.versus = answer.compare(s, on);
  row.scan = answer.scan(s, hardware, true);
  row.final_metric = s.final_metric.mean;
  if (std::isnan(row.step)) {
    row.dropped = missing.empty() ? "no step on the link: its runs recorded no messages" : missing;
    return row;
  }
  for (const RunData* run : s.config->runs)
    if (!run->facts.dropped.empty() && !row.baseline) {
      row.dropped = "dropped while its probe trained: " + run->facts.dropped;
      return row;
    }
  predict(row, answer);
  return row;
}

// Predicted time to target at `rate` bits per second, the link's latency and overheads kept: the
// ranked time scaled by the step there, so that at the link's own rate it is the time ranked.
double seconds_at(const Answer& answer, const AdviceRow& row, const LinkSpec& link, double rate,
                  const HardwareProfile* hardware) {
  LinkSpec at = link;
  at.bits_per_second = rate;
  return row.seconds * step_of(answer, *row.summary, at, hardware, nullptr) / row.step;
}

void add_crossovers(const Answer& answer, std::vector<AdviceRow>& ranked, const LinkSpec& link,
                    const HardwareProfile* hardware) {
  const auto base = std::find_if(ranked.begin(), ranked.end(), [](const AdviceRow& r) { return r.baseline; });
  if (base == ranked.end()) return;
  for (AdviceRow& row : ranked) {
    if (row.baseline) continue;
    // Compression pays on slow links: the top of the run of bandwidths, from the slowest up, at
    // which it is the faster (a faster point among faster links alone is the compute's noise).
    for (double rate : scanned_bandwidths()) {
      if (!(seconds_at(answer, row, link, rate, hardware) < seconds_at(answer, *base, link, rate, hardware))) break;
      row.crossover = rate;
    }
  }
}

bool has_interval(const AdviceRow& row) { return !std::isnan(row.low) && !std::isnan(row.high); }

// "95% over seeds", "95% over the 2 of 3 seeds that reached it" (the others' steps unknown: the
// time is of those that reached it), "80% of its curve's fit".
std::string interval_name(const AdviceRow& row) {
  if (row.basis != StepsBasis::Probe) return "80% of its curve's fit";
  if (row.time.reached < row.time.runs)
    return str_cat("95% over the ", row.time.reached, " of ", row.time.runs, " seeds that reached it");
  return "95% over seeds";
}

std::string first_two_text(const AdviceRow& a, const AdviceRow& b) {
  const std::string apart = str_cat(a.candidate, " is predicted ", fixed((1 - a.seconds / b.seconds) * 100, 0),
                                    "% faster than ", b.candidate);
  if (!has_interval(a) || !has_interval(b))
    return str_cat(apart,
                   ", but one of them has no interval (one probe run that reached the target): probes with "
                   "more seeds of both (--seeds 5) would tell them apart");
  if (a.high < b.low) return str_cat(apart, "; their intervals do not overlap");
  return str_cat(apart, ", but their intervals overlap: more seeds of both (--seeds 5), or their full runs, would ",
                 "tell them apart");
}

// Advice::host_costs, where the link names no cost per message on the hosts.
constexpr const char* kWireAlone =
    "The messages are projected onto the wire alone, with no cost per message on the hosts: where a "
    "message is short on the wire (a compressed one, or any on a fast link) that cost can be most of its time. "
    "Give it as --link BANDWIDTH,LATENCY,OVERHEAD[,HOST_BANDWIDTH], calibrated on means over a run's steps "
    "(docs/network-model.md); on the machine of laconic's own checks, leaving it out made the first choice at "
    "10 Gbit/s slower than the best (docs/advise.md)";

// What the answer found disturbed in the ranked candidates' probes, and what it means here.
std::string probe_noise_text(const Answer& answer, const std::vector<AdviceRow>& ranked) {
  std::vector<const Verdict*> verdicts;
  for (const AdviceRow& row : ranked) verdicts.push_back(&answer.verdict(*row.summary));
  const std::string disturbed = noise_text(verdicts);
  if (disturbed.empty()) return "";
  return str_cat("The probes carry the host's noise (", disturbed,
                 "). Each step here takes compute as its mean over every probe (",
                 seconds(answer.shared_compute(*ranked.front().summary) * 1e3),
                 " ms: the same work for every candidate), so that part of it does not rank them; what it does to "
                 "their codec and wait, more seeds (--seeds 5) average");
}

std::string prediction_text(const AdviceRow& row) {
  if (!row.dropped.empty()) return "dropped (why: below the table)";
  const std::string time = seconds(row.seconds) + " s";
  const std::string basis = row.basis == StepsBasis::Curve ? ", extrapolated" : "";
  if (!has_interval(row))
    return row.basis == StepsBasis::Probe && row.time.reached < row.time.runs
               ? str_cat(time, " (no interval: ", row.time.reached, " of ", row.time.runs, " seeds reached it)")
               : str_cat(time, " (no interval: one run", basis, ")");
  return str_cat(time, " [", seconds(row.low), ", ", std::isinf(row.high) ? "inf" : seconds(row.high), "] (",
                 interval_name(row), basis, ")");
}

// The bandwidth below which it beats the baseline: beyond the noise where the scan says so,
// else where the point estimates cross.
std::string break_even_text(const AdviceRow& row) {
  if (row.baseline) return "baseline";
  if (!row.dropped.empty()) return kMissing;
  if (!std::isnan(row.scan.break_even)) return "below " + rate_text(row.scan.break_even) + " (beyond the noise)";
  if (!std::isnan(row.crossover)) return "below " + rate_text(row.crossover) + " (point estimates)";
  return "never (10 Mbit/s to 100 Gbit/s)";
}

// Against the baseline: the answer's verdict where both reached the target in their probes, else
// the predicted change.
std::string versus_text(const AdviceRow& row, const AdviceRow* base) {
  if (row.baseline) return "baseline";
  if (!row.dropped.empty() || base == nullptr) return comparison_text(row.versus, row.time);
  if (row.basis == StepsBasis::Probe && base->basis == StepsBasis::Probe) return comparison_text(row.versus, row.time);
  const double change = (row.seconds / base->seconds - 1) * 100;
  return str_cat(change >= 0 ? "+" : "", fixed(change, 0), "% (extrapolated)");
}

}  // namespace

Advice advice_of(const ExperimentModel& model, const LinkSpec& link, const HardwareProfile* hardware) {
  const Answer& answer = *model.answer;
  Advice advice;
  advice.link = link;
  advice.hardware = hardware;
  advice.metric = model.metric;
  if (!answer.targets().empty()) {
    advice.target = answer.targets().front().value;
    advice.target_source = answer.targets().front().source;
  }
  for (const ConfigSummary& s : model.summaries) {
    AdviceRow row = row_of(answer, s, link, hardware);  // dropped or predicted
    (row.dropped.empty() ? advice.ranked : advice.dropped).push_back(std::move(row));
  }
  std::stable_sort(advice.ranked.begin(), advice.ranked.end(),
                   [](const AdviceRow& a, const AdviceRow& b) { return a.seconds < b.seconds; });
  add_crossovers(answer, advice.ranked, link, hardware);
  if (advice.ranked.size() >= 2) advice.first_two = first_two_text(advice.ranked[0], advice.ranked[1]);
  if (hardware == nullptr) advice.probe_noise = probe_noise_text(answer, advice.ranked);
  if (link.overhead_seconds == 0) advice.host_costs = kWireAlone;
  return advice;
}

Table advice_table(const Advice& advice) {
  Table table;
  table.slug = "advice";
  const std::string on =
      advice.link.text + (advice.hardware != nullptr ? str_cat(", ", advice.hardware->name) : std::string());
  table.columns = {{"rank", Align::Right},
                   {"candidate"},
                   {str_cat("step on ", on, " (s)"), Align::Right},
                   {"steps to target", Align::Right},
                   {str_cat("time to target on ", on), Align::Right},
                   {"vs baseline", Align::Right},
                   {"faster than the baseline", Align::Right},
                   {str_cat("final ", advice.metric.label), Align::Right}};
  table.csv.header = {"rank",          "candidate",    "step_s",      "steps_to_target", "steps_basis",
                      "time_s",        "time_low_s",   "time_high_s", "versus_baseline", "break_even_bps",
                      "crossover_bps", "final_metric", "dropped"};
  std::size_t rank = 0;
  const auto base_at =
      std::find_if(advice.ranked.begin(), advice.ranked.end(), [](const AdviceRow& r) { return r.baseline; });
  const AdviceRow* base = base_at == advice.ranked.end() ? nullptr : &*base_at;
  const auto add = [&](const AdviceRow& row) {
    const std::string place = row.dropped.empty() ? std::to_string(++rank) : "-";
    const char* basis = row.dropped.empty() ? (row.basis == StepsBasis::Probe ? "probe" : "curve") : "";
    table.add_row(
        {place, row.candidate, seconds(row.step), fixed(row.steps, 0), prediction_text(row), versus_text(row, base),
         break_even_text(row), fixed(row.final_metric, advice.metric.digits)},
        {row.dropped.empty() ? place : "", row.candidate, raw_number(row.step), raw_number(row.steps), basis,
         raw_number(row.seconds), raw_number(row.low), raw_number(row.high), versus_word(row.versus.versus),
         raw_number(row.scan.break_even), raw_number(row.crossover), raw_number(row.final_metric), row.dropped});
  };
  for (const AdviceRow& row : advice.ranked) add(row);
  for (const AdviceRow& row : advice.dropped) add(row);
  return table;
}

namespace {

// Messages per step and worker of the probes of the dense exchange (a full-precision compressor,
// `none`, at `workers`: RunData::full_precision, the resolved fact); 0 when none was probed there
// or none recorded them.
double dense_messages(const Advice& advice, std::int64_t workers) {
  for (const auto* rows : {&advice.ranked, &advice.dropped})
    for (const AdviceRow& row : *rows) {
      if (row.summary == nullptr || row.summary->config->runs.empty()) continue;
      const RunData& run = *row.summary->config->runs.front();
      if (run.full_precision() && run.run.workers == workers) return or_zero(row.summary->messages.mean);
    }
  return 0;
}

}  // namespace

std::string dropped_text(const Advice& advice) {
  std::string out;
  for (const AdviceRow& row : advice.dropped)
    out += str_cat(out.empty() ? "Dropped: " : "; ", row.candidate, ": ", row.dropped);
  return out;
}

namespace {

// The non-empty ones, each ended with a full stop, joined by spaces.
std::string sentences(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts)
    if (!part.empty()) out += str_cat(out.empty() ? "" : " ", part, ".");
  return out;
}

}  // namespace

std::vector<AdviceLayers> advice_layers(const Advice& advice) {
  std::vector<AdviceLayers> out;
  for (const AdviceRow& row : advice.ranked) {
    if (row.summary == nullptr || row.summary->config->runs.empty()) continue;
    const RunData& run = *row.summary->config->runs.front();
    if (run.layer_costs.layers.empty()) continue;
    // On islands a layer's bytes split between two links, which the plan's one link cannot say.
    if (traffic_of(*row.summary).on_islands()) continue;
    const int workers = static_cast<int>(run.run.workers);
    const double own = or_zero(row.summary->messages.mean);
    const LayerMessages messages{own, run.layer_costs.summable ? own : dense_messages(advice, run.run.workers)};
    if (advice.hardware == nullptr) {
      out.push_back(
          {row.summary, row.candidate, plan_layers(run.layer_costs, advice.link, workers, messages), "this host"});
    } else if (const CompressorCost* cost = advice.hardware->compressor(run.run.compressor)) {
      out.push_back({row.summary, row.candidate,
                     plan_layers(costs_on_hardware(run.layer_costs, *cost), advice.link, workers, messages),
                     advice.hardware->name});
    }
  }
  return out;
}

std::string advice_layers_text(const std::vector<AdviceLayers>& layers) {
  std::string out;
  for (const AdviceLayers& l : layers)
    out += str_cat(out.empty() ? "" : "\n", "- ", l.candidate, " (codec costs of ", l.codec_costs,
                   "): ", layer_plan_summary(l.plan));
  return out;
}

std::optional<Section> advice_section(const ExperimentModel& model, const HardwareProfile* hardware) {
  std::string link_text;
  for (const RunData& run : model.compared)
    if (!run.facts.advised_link.empty()) link_text = run.facts.advised_link;
  if (link_text.empty()) return std::nullopt;
  LinkSpec link;
  try {
    link = parse_link(link_text);
  } catch (const ConfigError&) {
    return std::nullopt;  // a link this laconic cannot read: the rest of the report stands
  }
  const Advice advice = advice_of(model, link, hardware);
  Section section{
      "Advice",
      str_cat("laconic advise ranked these candidates by predicted time to the target on ", link_text,
              hardware != nullptr ? str_cat(" with the steps projected onto ", hardware->name) : std::string(),
              ": steps to the target (as each probe took them where it reached the target, with a 95% interval over "
              "seeds; else extrapolated from its learning curve, a power law of the steps fitted to its evaluations "
              "but the first third, with an 80% interval of the fit) x its step (compute the mean over every "
              "probe, the same work for each candidate; compress and wait as its probes measured them; its messages "
              "projected onto the link by the alpha-beta model). Faster than the baseline: the "
              "bandwidths below which its predicted time is the shorter, beyond the noise where the answer can say "
              "so, else by point estimates. Projections, not measurements (docs/advise.md)."),
      {advice_table(advice)},
      {},
      sentences({dropped_text(advice), advice.first_two, advice.probe_noise, advice.host_costs}),
      "advice"};
  const std::vector<AdviceLayers> layers = advice_layers(advice);
  if (!layers.empty()) {
    section.tables.push_back(layer_plan_table(layers.front().plan, layers.front().candidate));
    section.lead += str_cat(section.lead.empty() ? "" : "\n\n", "Which layers to leave dense (", kLayerPlanBasis,
                            "):\n\n", advice_layers_text(layers));
  }
  return section;
}

}  // namespace laconic::advise
