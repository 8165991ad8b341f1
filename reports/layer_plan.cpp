#include "reports/layer_plan.hpp"

#include <algorithm>
#include <set>

#include "reports/format.hpp"

namespace laconic::reports {
namespace {

double split_cost(const std::vector<LayerChoice>& layers, std::size_t min_size) {
  double total = 0;
  for (const LayerChoice& l : layers) total += l.elements < min_size ? l.dense_seconds : l.compressed_seconds;
  return total;
}

// "46.2 us", "1.25 ms": three significant digits, so that a small saving still shows.
std::string milliseconds(double seconds) {
  const double us = seconds * 1e6;
  if (us < 1000) return fixed(us, us < 10 ? 2 : us < 100 ? 1 : 0) + " us";
  return fixed(us / 1e3, us < 1e4 ? 2 : us < 1e5 ? 1 : 0) + " ms";
}

}  // namespace

LayerPlan plan_layers(const LayerCodecCosts& costs, const LinkSpec& link, int workers) {
  LayerPlan plan;
  plan.link = link;
  plan.workers = workers;
  plan.summable = costs.summable;
  const double p = std::max(1, workers);
  const double sent_per_byte = costs.summable ? 2 * (p - 1) / p : p - 1;
  const double decodes = costs.summable ? 1 : p;
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
    plan.all_compressed += l.compressed_seconds;
    plan.all_dense += l.dense_seconds;
    plan.per_layer_best += std::min(l.dense_seconds, l.compressed_seconds);
    thresholds.insert(c.elements + 1);
    plan.layers.push_back(l);
  }
  plan.planned = plan.all_compressed;
  for (const std::size_t t : thresholds) {  // ascending: a tie keeps the smaller
    const double cost = split_cost(plan.layers, t);
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
  table.title = str_cat("Which layers to leave dense: ", candidate, " at ", plan.workers, " workers on ", plan.link.text);
  table.slug = "advice_layers";
  table.columns = {{"layer", Align::Right},          {"elements", Align::Right},
                   {"dense bytes", Align::Right},    {"dense (us/step)", Align::Right},
                   {"compressed bytes", Align::Right}, {"compressed (us/step)", Align::Right},
                   {"sent"}};
  table.csv.header = {"layer", "elements", "dense_bytes", "dense_seconds", "compressed_bytes", "compressed_seconds", "sent"};
  for (const LayerChoice& l : plan.layers) {
    const std::string sent = l.dense ? "dense" : "compressed";
    table.add_row({std::to_string(l.index), std::to_string(l.elements), human_bytes(l.dense_bytes),
                   fixed(l.dense_seconds * 1e6, 2), human_bytes(l.compressed_bytes), fixed(l.compressed_seconds * 1e6, 2),
                   sent},
                  {std::to_string(l.index), std::to_string(l.elements), raw_number(l.dense_bytes),
                   raw_number(l.dense_seconds), raw_number(l.compressed_bytes), raw_number(l.compressed_seconds), sent});
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
  const std::string tail = str_cat("; every layer dense in its payload: ", milliseconds(plan.all_dense), own_best, ")");
  if (plan.min_size == 0)
    return str_cat("compress every layer: no min_size does better (the exchange ", milliseconds(plan.all_compressed),
                   " per step and worker", tail);
  if (dense_layers == plan.layers.size())
    return str_cat("leave every layer dense: compressing none is cheapest on this link (dense in its payload ",
                   milliseconds(plan.all_dense), " per step and worker against ", milliseconds(plan.all_compressed),
                   " compressing every layer", own_best, ")");
  return str_cat("scope = \"layer\", min_size = ", plan.min_size, ": ", dense_layers, " of ", plan.layers.size(),
                 " layers (", dense_elements, " elements) dense, the exchange ", milliseconds(plan.planned),
                 " per step and worker instead of ", milliseconds(plan.all_compressed), " compressing every layer (",
                 fixed(100 * (1 - plan.planned / plan.all_compressed), 1), "% less)",
                 tail);
}

}  // namespace laconic::reports
