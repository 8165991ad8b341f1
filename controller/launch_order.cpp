#include "controller/launch_order.hpp"

#include <nlohmann/json.hpp>

namespace laconic::controller {

std::string LaunchOrder::to_json() const {
  const nlohmann::json out = {{"run_index", run_index},
                              {"run_name", run_name},
                              {"store_prefix", store_prefix},
                              {"resolved", nlohmann::json::parse(resolved.to_json())}};
  return out.dump();
}

std::optional<LaunchOrder> LaunchOrder::from_json(const std::string& text) {
  const auto in = nlohmann::json::parse(text, nullptr, false);
  if (!in.is_object()) return std::nullopt;
  try {
    LaunchOrder order;
    order.run_index = in.at("run_index").get<std::size_t>();
    order.run_name = in.at("run_name").get<std::string>();
    order.store_prefix = in.at("store_prefix").get<std::string>();
    const auto resolved = ResolvedRun::from_json(in.at("resolved").dump());
    if (!resolved) return std::nullopt;
    order.resolved = *resolved;
    return order;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace laconic::controller
