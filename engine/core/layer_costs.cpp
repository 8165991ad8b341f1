#include "engine/core/layer_costs.hpp"

#include <nlohmann/json.hpp>

namespace laconic {

std::string LayerCodecCosts::to_json_text() const {
  nlohmann::json layers_json = nlohmann::json::array();
  for (const LayerCodecCost& l : layers)
    layers_json.push_back({l.elements, l.payload_bytes, l.compress_seconds, l.decode_seconds, l.dense_compress_seconds,
                           l.dense_decode_seconds});
  const nlohmann::json out = {
      {"version", kVersion},
      {"summable", summable},
      {"columns",
       {"elements", "payload_bytes", "compress_seconds", "decode_seconds", "dense_compress_seconds",
        "dense_decode_seconds"}},
      {"layers", layers_json}};
  return out.dump();
}

LayerCodecCosts LayerCodecCosts::from_json_text(const std::string& text) {
  LayerCodecCosts costs;
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object() || json.value("version", 0) != kVersion || !json.contains("layers")) return costs;
  try {
    costs.summable = json.at("summable").get<bool>();
    for (const auto& row : json.at("layers")) {
      if (!row.is_array() || row.size() != 6) return {};
      costs.layers.push_back({row[0].get<std::size_t>(), row[1].get<double>(), row[2].get<double>(),
                              row[3].get<double>(), row[4].get<double>(), row[5].get<double>()});
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return costs;
}

}  // namespace laconic
