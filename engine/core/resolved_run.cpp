#include "engine/core/resolved_run.hpp"

#include <nlohmann/json.hpp>

namespace laconic {

std::string ResolvedRun::to_json() const {
  const nlohmann::json out = {
      {"version", kVersion},
      {"workers", workers},
      {"world_size", world_size},
      {"thread_ranks", thread_ranks},
      {"compressor",
       {{"full_precision", compressor.full_precision},
        {"summable", compressor.summable},
        {"fixed_size", compressor.fixed_size},
        {"multi_round", compressor.multi_round}}},
  };
  return out.dump();
}

std::optional<ResolvedRun> ResolvedRun::from_json(const std::string& text) {
  const auto in = nlohmann::json::parse(text, nullptr, false);
  if (!in.is_object() || in.value("version", 0) != kVersion) return std::nullopt;
  try {
    ResolvedRun run;
    run.workers = in.at("workers").get<std::int64_t>();
    run.world_size = in.at("world_size").get<int>();
    run.thread_ranks = in.at("thread_ranks").get<bool>();
    const auto& c = in.at("compressor");
    run.compressor = {c.at("full_precision").get<bool>(), c.at("summable").get<bool>(), c.at("fixed_size").get<bool>(),
                      c.at("multi_round").get<bool>()};
    return run;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace laconic
