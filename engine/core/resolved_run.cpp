#include "engine/core/resolved_run.hpp"

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"

namespace laconic {
namespace {

using nlohmann::json;

constexpr const char* kPlacementNames[] = {"processes", "threads"};

json link_json(const LinkSpec& l, bool emulated) {
  json out = {{"text", l.text},
              {"bits_per_second", l.bits_per_second},
              {"latency_seconds", l.latency_seconds},
              {"overhead_seconds", l.overhead_seconds},
              {"host_bits_per_second", l.host_bits_per_second},
              {"payload_fraction", l.payload_fraction},
              {"emulated", emulated}};
  if (l.trace.empty()) return out;
  json& trace = out["trace"] = json::array();
  for (const LinkChange& c : l.trace)
    trace.push_back({c.at_seconds, c.bits_per_second, c.latency_seconds ? json(*c.latency_seconds) : json(nullptr)});
  return out;
}

LinkSpec link_of(const json& l) {
  LinkSpec spec;
  spec.text = l.at("text").get<std::string>();
  spec.bits_per_second = l.at("bits_per_second").get<double>();
  spec.latency_seconds = l.at("latency_seconds").get<double>();
  spec.overhead_seconds = l.at("overhead_seconds").get<double>();
  spec.host_bits_per_second = l.at("host_bits_per_second").get<double>();
  spec.payload_fraction = l.at("payload_fraction").get<double>();
  for (const json& c : l.value("trace", json::array())) {
    LinkChange change{c.at(0).get<double>(), c.at(1).get<double>(), std::nullopt};
    if (!c.at(2).is_null()) change.latency_seconds = c.at(2).get<double>();
    spec.trace.push_back(change);
  }
  return spec;
}

json islands_json(const ResolvedIslands& i) {
  return {{"sizes", i.sizes},
          {"inside", link_json(i.inside, i.emulated)},
          {"between", link_json(i.between, i.emulated)},
          {"emulated", i.emulated}};
}

ResolvedIslands islands_of(const json& i) {
  return {i.at("sizes").get<std::vector<std::int64_t>>(), link_of(i.at("inside")), link_of(i.at("between")),
          i.at("emulated").get<bool>()};
}

json hardware_json(const ResolvedRun& run) {
  if (!run.hardware) return nullptr;
  json out = hardware_profile_to_json(*run.hardware);
  out["origin"] = run.hardware->origin;  // for messages; the profile's reader skips it
  return out;
}

RankPlacement placement_of(const std::string& text) {
  for (int p = 0; p < 2; ++p)
    if (text == kPlacementNames[p]) return static_cast<RankPlacement>(p);
  throw ConfigError("unknown placement " + text);
}

}  // namespace

const char* placement_name(RankPlacement placement) { return kPlacementNames[static_cast<int>(placement)]; }

std::string ResolvedRun::to_json() const {
  json out = {
      {"version", kVersion},
      {"workers", workers},
      {"world_size", world_size},
      {"placement", placement_name(placement)},
      {"compressor",
       {{"full_precision", compressor.full_precision},
        {"summable", compressor.summable},
        {"fixed_size", compressor.fixed_size},
        {"multi_round", compressor.multi_round},
        {"summed_in_transit", compressor.summed_in_transit}}},
      {"link", link ? link_json(*link, link_emulated) : json(nullptr)},
      {"hardware", hardware_json(*this)},
      {"test_metric",
       {{"key", test_metric.key}, {"higher_is_better", test_metric.higher_is_better}, {"split", test_metric.split}}},
      {"model_parameters", model_parameters},
      {"configuration", configuration},
      {"device", device},
      {"codecs_on", codecs_on},
  };
  if (islands) out["islands"] = islands_json(*islands);
  return out.dump();
}

std::optional<ResolvedRun> ResolvedRun::from_json(const std::string& text) {
  const auto in = json::parse(text, nullptr, false);
  if (!in.is_object() || in.value("version", 0) != kVersion) return std::nullopt;
  try {
    ResolvedRun run;
    run.workers = in.at("workers").get<std::int64_t>();
    run.world_size = in.at("world_size").get<int>();
    run.placement = placement_of(in.at("placement").get<std::string>());
    const auto& c = in.at("compressor");
    run.compressor = {c.at("full_precision").get<bool>(), c.at("summable").get<bool>(), c.at("fixed_size").get<bool>(),
                      c.at("multi_round").get<bool>(), c.value("summed_in_transit", std::string())};
    if (const json& l = in.at("link"); !l.is_null()) {
      run.link = link_of(l);
      run.link_emulated = l.at("emulated").get<bool>();
    }
    if (in.contains("islands")) run.islands = islands_of(in.at("islands"));
    if (const json& h = in.at("hardware"); !h.is_null())
      run.hardware = hardware_profile_from_json(h, h.value("origin", std::string("the run's resolved hardware")));
    const auto& m = in.at("test_metric");
    run.test_metric = {m.at("key").get<std::string>(), m.at("higher_is_better").get<bool>(),
                       m.value("split", std::string("test"))};
    run.model_parameters = in.value("model_parameters", std::int64_t{0});
    run.configuration = in.at("configuration").get<std::string>();
    run.device = in.value("device", std::string("cpu"));
    run.codecs_on = in.value("codecs_on", std::string("cpu"));
    return run;
  } catch (const json::exception&) {
    return std::nullopt;
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

}  // namespace laconic
