#include "advise/layer_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "reports/format.hpp"

namespace laconic::advise {

using namespace reports;  // advise reads the report's model and answer throughout

namespace {

// The compressor of a configuration's first run, without the fields a layer split sets.
nlohmann::json compressor_without_split(const ConfigSummary& s) {
  if (s.config == nullptr || s.config->runs.empty()) return nullptr;
  nlohmann::json c = s.config->runs.front()->run.config.value("compressor", nlohmann::json::object());
  c.erase("scope");
  c.erase("min_size");
  return c;
}

// The min_size of a configuration whose compressor has scope = "layer"; nullopt otherwise.
std::optional<std::size_t> layer_min_size(const ConfigSummary& s) {
  const nlohmann::json c = s.config->runs.front()->run.config.value("compressor", nlohmann::json::object());
  if (c.value("scope", nlohmann::json()) != "layer") return std::nullopt;
  const nlohmann::json min_size = c.value("min_size", nlohmann::json(0));
  if (!min_size.is_number_integer() || min_size.get<std::int64_t>() < 0) return std::nullopt;
  return min_size.get<std::size_t>();
}

std::string microseconds(double seconds) { return std::isnan(seconds) ? kMissing : fixed(seconds * 1e6, 1); }

// "2194.3 ± 120 (95%)" over seeds, "2194.3 (n=1)".
std::string microseconds_ci(const Stats& stats) {
  const double h = ci95_half_width(stats);
  return std::isnan(h) ? str_cat(microseconds(stats.mean), " (n=", stats.n, ")")
                       : str_cat(microseconds(stats.mean), " ± ", fixed(h * 1e6, 0));
}

// How the plan's choice compares with the split measured cheapest.
std::string against_cheapest(const LayerCheckRow& planned, const LayerCheckRow& cheapest) {
  const double d = planned.measured_exchange.mean - cheapest.measured_exchange.mean;
  const double h = welch_ci95_half_width(planned.measured_exchange, cheapest.measured_exchange);
  const std::string head = str_cat("the plan chose min_size = ", planned.predicted.min_size, " (measured ",
                                   microseconds(planned.measured_exchange.mean), " us, ", microseconds(d), " us more");
  if (std::isnan(h)) return head + "; one seed of either: no interval)";
  return str_cat(head, ", 95% interval of the difference ± ", fixed(h * 1e6, 0),
                 " us over seeds: ", d <= h ? "within the noise)" : "slower beyond the noise)");
}

}  // namespace

std::vector<LayerCheckRow> check_layers(const std::vector<AdviceLayers>& layers, const ExperimentModel& full) {
  std::vector<LayerCheckRow> out;
  for (const AdviceLayers& advised : layers) {
    if (advised.summary == nullptr) continue;
    const nlohmann::json candidate = compressor_without_split(*advised.summary);
    std::vector<LayerCheckRow> rows;
    for (const ConfigSummary& s : full.summaries) {
      if (s.config->runs.empty()) continue;
      const std::optional<std::size_t> min_size = layer_min_size(s);
      if (!min_size || s.config->runs.front()->run.workers != advised.plan.workers) continue;
      if (compressor_without_split(s) != candidate) continue;
      const LayerSplit split = split_at(advised.plan, *min_size);
      const bool chosen = split.dense_layers == split_at(advised.plan, advised.plan.min_size).dense_layers;
      const Stats exchange =
          over_seeds(*s.config, [](const RunData& r) { return or_zero(r.compress) + or_zero(r.communicate); });
      rows.push_back({advised.candidate, chosen, split, s.link_bytes.mean, s.compress.mean, exchange});
    }
    std::sort(rows.begin(), rows.end(), [](const LayerCheckRow& a, const LayerCheckRow& b) {
      return a.predicted.min_size < b.predicted.min_size;
    });
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

Table layer_check_table(const std::vector<LayerCheckRow>& rows) {
  Table table;
  table.slug = "advice_layers_check";
  table.columns = {{"candidate"},
                   {"min_size", Align::Right},
                   {"dense layers", Align::Right},
                   {"sent predicted", Align::Right},
                   {"sent measured", Align::Right},
                   {"codec predicted (us)", Align::Right},
                   {"codec measured (us)", Align::Right},
                   {"codec error", Align::Right},
                   {"exchange predicted (us)", Align::Right},
                   {"exchange measured (us, 95% over seeds)", Align::Right},
                   {"exchange error", Align::Right}};
  table.csv.header = {"candidate",
                      "min_size",
                      "chosen",
                      "dense_layers",
                      "predicted_link_bytes",
                      "measured_link_bytes",
                      "predicted_codec_s",
                      "measured_codec_s",
                      "predicted_exchange_s",
                      "measured_exchange_s",
                      "measured_exchange_std_s",
                      "seeds"};
  for (const LayerCheckRow& r : rows) {
    const LayerSplit& p = r.predicted;
    table.add_row(
        {r.candidate, str_cat(p.min_size, r.chosen ? " (planned)" : ""), std::to_string(p.dense_layers),
         human_bytes(p.link_bytes), std::isnan(r.measured_link_bytes) ? kMissing : human_bytes(r.measured_link_bytes),
         microseconds(p.codec_seconds), microseconds(r.measured_codec),
         relative_error(p.codec_seconds, r.measured_codec), microseconds(p.seconds),
         microseconds_ci(r.measured_exchange), relative_error(p.seconds, r.measured_exchange.mean)},
        {r.candidate, std::to_string(p.min_size), r.chosen ? "true" : "false", std::to_string(p.dense_layers),
         raw_number(p.link_bytes), raw_number(r.measured_link_bytes), raw_number(p.codec_seconds),
         raw_number(r.measured_codec), raw_number(p.seconds), raw_number(r.measured_exchange.mean),
         raw_number(r.measured_exchange.std), std::to_string(r.measured_exchange.n)});
  }
  return table;
}

std::string layer_check_text(const std::vector<LayerCheckRow>& rows) {
  std::string out;
  for (std::size_t from = 0; from < rows.size();) {
    std::size_t to = from;
    while (to < rows.size() && rows[to].candidate == rows[from].candidate) ++to;
    const LayerCheckRow* cheapest = nullptr;
    const LayerCheckRow* planned = nullptr;
    for (std::size_t i = from; i < to; ++i) {
      const double e = rows[i].measured_exchange.mean;
      if (!std::isnan(e) && (cheapest == nullptr || e < cheapest->measured_exchange.mean)) cheapest = &rows[i];
      if (rows[i].chosen && planned == nullptr) planned = &rows[i];
    }
    if (to - from >= 2 && cheapest != nullptr) {
      const std::string verdict = cheapest->chosen     ? "the plan's choice"
                                  : planned == nullptr ? "the plan's choice was not run"
                                                       : against_cheapest(*planned, *cheapest);
      out += str_cat(out.empty() ? "" : "\n", "- ", rows[from].candidate,
                     ": the cheapest exchange measured at min_size = ", cheapest->predicted.min_size, " (",
                     microseconds(cheapest->measured_exchange.mean), " us), ", verdict);
    }
    from = to;
  }
  return out;
}

}  // namespace laconic::advise
