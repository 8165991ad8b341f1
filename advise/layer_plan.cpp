#include "advise/layer_plan.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "reports/format.hpp"

namespace laconic::advise {

using namespace reports;  // advise reads the report's model and answer throughout

namespace {

// Bytes sent per payload byte and payloads decoded, summed or gathered among `workers`.
std::pair<double, double> collective_factors(bool summed, int workers) {
  const double p = std::max(1, workers);
  return summed ? std::pair{2 * (p - 1) / p, 1.0} : std::pair{p - 1, p};
}

// "46.2 us", "1.25 ms": three significant digits, so that a small saving still shows.
std::string milliseconds(double seconds) {
  const double us = seconds * 1e6;
  if (us < 1000) return fixed(us, us < 10 ? 2 : us < 100 ? 1 : 0) + " us";
  return fixed(us / 1e3, us < 1e4 ? 2 : us < 1e5 ? 1 : 0) + " ms";
}

// Each layer its own best way with at least one compressed (every layer dense sums: that is
// all_dense), in the candidate's collective; its messages not counted.
double best_mixed(const std::vector<LayerChoice>& layers) {
  double total = 0, cheapest_switch = std::numeric_limits<double>::infinity();
  bool compressed = false;
  for (const LayerChoice& l : layers) {
    total += std::min(l.dense_seconds, l.compressed_seconds);
    compressed = compressed || l.compressed_seconds < l.dense_seconds;
    cheapest_switch = std::min(cheapest_switch, l.compressed_seconds - l.dense_seconds);
  }
  return compressed || layers.empty() ? total : total + cheapest_switch;
}

}  // namespace

LayerSplit split_at(const LayerPlan& plan, std::size_t min_size) {
  LayerSplit split;
  split.min_size = min_size;
  for (const LayerCodecCost& c : plan.costs.layers) split.dense_layers += c.elements < min_size ? 1 : 0;
  split.summed = plan.summable || split.dense_layers == plan.costs.layers.size();
  const auto [sent_per_byte, decodes] = collective_factors(split.summed, plan.workers);
  double payload = 0;
  for (const LayerCodecCost& c : plan.costs.layers) {
    const bool dense = c.elements < min_size;
    payload += dense ? 4.0 * static_cast<double>(c.elements) : c.payload_bytes;
    split.codec_seconds += dense ? c.dense_compress_seconds + decodes * c.dense_decode_seconds
                                 : c.compress_seconds + decodes * c.decode_seconds;
  }
  split.link_bytes = sent_per_byte * payload;
  split.messages = split.summed && !plan.summable ? plan.messages.dense : plan.messages.own;
  split.seconds = plan.link.project(split.messages, split.link_bytes) + split.codec_seconds;
  return split;
}

LayerPlan plan_layers(const LayerCodecCosts& costs, const LinkSpec& link, int workers, LayerMessages messages) {
  LayerPlan plan;
  plan.link = link;
  plan.messages = messages;
  plan.workers = workers;
  plan.summable = costs.summable;
  plan.costs = costs;
  const auto [sent_per_byte, decodes] = collective_factors(costs.summable, workers);
  std::set<std::size_t> thresholds = {0};
  for (std::size_t i = 0; i < costs.layers.size(); ++i) {
    const LayerCodecCost& c = costs.layers[i];
    LayerChoice l;
    l.index = i;
    l.elements = c.elements;
    l.dense_bytes = 4.0 * static_cast<double>(c.elements);
    l.compressed_bytes = c.payload_bytes;
    l.dense_seconds =
        link.project(0, sent_per_byte * l.dense_bytes) + c.dense_compress_seconds + decodes * c.dense_decode_seconds;
    l.compressed_seconds =
        link.project(0, sent_per_byte * l.compressed_bytes) + c.compress_seconds + decodes * c.decode_seconds;
    thresholds.insert(c.elements + 1);
    plan.layers.push_back(l);
  }
  plan.all_compressed = split_at(plan, 0).seconds;
  plan.all_dense = split_at(plan, *thresholds.rbegin()).seconds;
  plan.per_layer_best = std::min(best_mixed(plan.layers) + link.project(messages.own, 0), plan.all_dense);
  plan.planned = plan.all_compressed;
  for (const std::size_t t : thresholds) {  // ascending: a tie keeps the smaller
    const double cost = split_at(plan, t).seconds;
    if (cost < plan.planned) {
      plan.planned = cost;
      plan.min_size = t;
    }
  }
  for (LayerChoice& l : plan.layers) l.dense = l.elements < plan.min_size;
  return plan;
}

LayerCodecCosts costs_on_hardware(const LayerCodecCosts& measured, const CompressorCost& cost) {
  LayerCodecCosts out = measured;
  for (LayerCodecCost& l : out.layers) {
    const double n = static_cast<double>(l.elements);
    l.compress_seconds = cost.compress.seconds(n, 1);
    l.decode_seconds = cost.decompress.seconds(n, 1);
    l.dense_compress_seconds = 0;
    l.dense_decode_seconds = 0;
  }
  return out;
}

Table layer_plan_table(const LayerPlan& plan, const std::string& candidate) {
  Table table;
  table.title =
      str_cat("Which layers to leave dense: ", candidate, " at ", plan.workers, " workers on ", plan.link.text);
  table.slug = "advice_layers";
  table.columns = {{"layer", Align::Right},
                   {"elements", Align::Right},
                   {"dense bytes", Align::Right},
                   {"dense (us/step)", Align::Right},
                   {"compressed bytes", Align::Right},
                   {"compressed (us/step)", Align::Right},
                   {"sent"}};
  table.csv.header = {"layer", "elements", "dense_bytes", "dense_seconds", "compressed_bytes", "compressed_seconds",
                      "sent"};
  for (const LayerChoice& l : plan.layers) {
    const std::string sent = l.dense ? "dense" : "compressed";
    table.add_row(
        {std::to_string(l.index), std::to_string(l.elements), human_bytes(l.dense_bytes),
         fixed(l.dense_seconds * 1e6, 2), human_bytes(l.compressed_bytes), fixed(l.compressed_seconds * 1e6, 2), sent},
        {std::to_string(l.index), std::to_string(l.elements), raw_number(l.dense_bytes), raw_number(l.dense_seconds),
         raw_number(l.compressed_bytes), raw_number(l.compressed_seconds), sent});
  }
  return table;
}

std::string layer_plan_summary(const LayerPlan& plan) {
  std::size_t dense_layers = 0, dense_elements = 0;
  for (const LayerChoice& l : plan.layers)
    if (l.dense) {
      ++dense_layers;
      dense_elements += l.elements;
    }
  // A threshold cannot leave a big layer dense and a small one compressed: say what that would give.
  const bool threshold_short = plan.planned > plan.per_layer_best * (1 + 1e-9);
  const std::string own_best =
      threshold_short ? str_cat("; each layer its own best way: ", milliseconds(plan.per_layer_best)) : "";
  const std::string tail =
      str_cat("; every layer dense, the payload summed: ", milliseconds(plan.all_dense), own_best, ")");
  if (plan.min_size == 0)
    return str_cat("compress every layer: no min_size does better (the exchange ", milliseconds(plan.all_compressed),
                   " per step and worker", tail);
  if (dense_layers == plan.layers.size())
    return str_cat(
        "leave every layer dense: compressing none is cheapest on this link (every layer dense, the payload summed, ",
        milliseconds(plan.all_dense), " per step and worker against ", milliseconds(plan.all_compressed),
        " compressing every layer", own_best, ")");
  return str_cat("scope = \"layer\", min_size = ", plan.min_size, ": ", dense_layers, " of ", plan.layers.size(),
                 " layers (", dense_elements, " elements) dense, the exchange ", milliseconds(plan.planned),
                 " per step and worker instead of ", milliseconds(plan.all_compressed), " compressing every layer (",
                 fixed(100 * (1 - plan.planned / plan.all_compressed), 1), "% less)", tail);
}

}  // namespace laconic::advise
