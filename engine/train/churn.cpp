#include "engine/train/churn.hpp"

#include <algorithm>
#include <sstream>

#include "engine/core/error.hpp"

namespace laconic::train {

std::vector<int> Churn::present(std::int64_t step, std::int64_t workers) const {
  std::vector<bool> in(static_cast<std::size_t>(workers), true);
  for (const ChurnEvent& e : events()) {
    if (e.step > step) break;
    for (int r : e.ranks) in.at(static_cast<std::size_t>(r)) = e.join;
  }
  std::vector<int> out;
  for (std::size_t r = 0; r < in.size(); ++r)
    if (in[r]) out.push_back(static_cast<int>(r));
  return out;
}

void Churn::check(std::int64_t workers) const {
  std::vector<bool> in(static_cast<std::size_t>(workers), true);
  for (const ChurnEvent& e : events())
    for (int r : e.ranks) {
      const char* verb = e.join ? "join" : "leave";
      if (r < 0 || r >= workers)
        throw ConfigError(str_cat("churn: rank ", r, " cannot ", verb, " a run of ", workers, " workers"));
      if (r == 0) throw ConfigError("churn: worker 0 stays (it evaluates and records for the run)");
      if (in[static_cast<std::size_t>(r)] == e.join)
        throw ConfigError(str_cat("churn: rank ", r, " cannot ", verb, " at step ", e.step, ": it is ",
                                  e.join ? "present" : "absent", " then"));
      in[static_cast<std::size_t>(r)] = e.join;
    }
}

std::vector<ChurnEvent> parse_churn_events(const std::string& field, const std::string& text) {
  std::vector<ChurnEvent> events;
  std::stringstream all(text);
  for (std::string part; std::getline(all, part, ';');) {
    std::stringstream words(part);
    std::string verb, ranks, at;
    long long step = -1;
    if (!(words >> verb)) continue;
    const bool read = static_cast<bool>(words >> ranks >> at >> step);
    std::string extra;
    if (!read || (verb != "leave" && verb != "join") || at != "at" || step < 0 || (words >> extra))
      throw ConfigError(str_cat(field, ": each change is \"leave RANKS at STEP\" or \"join RANKS at STEP\" (RANKS "
                                       "a comma list), separated by ';', got \"",
                                part, "\""));
    ChurnEvent event{verb == "join", {}, step};
    std::stringstream list(ranks);
    for (std::string r; std::getline(list, r, ',');) {
      char* end = nullptr;
      const long rank = std::strtol(r.c_str(), &end, 10);
      if (r.empty() || *end != '\0') throw ConfigError(str_cat(field, ": \"", r, "\" in \"", part, "\" is not a rank"));
      event.ranks.push_back(static_cast<int>(rank));
    }
    if (!events.empty() && event.step < events.back().step)
      throw ConfigError(str_cat(field, ": changes must come in step order, ", part, " follows step ",
                                events.back().step));
    events.push_back(std::move(event));
  }
  return events;
}

OptionFields<ScriptOptions> ScriptOptions::fields() {
  using O = ScriptOptions;
  return OptionFields<O>()
      .text("events", &O::events,
            "the changes, in step order: \"leave 3 at 200; join 3 at 400\" (ranks as a comma list leave or join "
            "before that global step; worker 0 stays)")
      .rule([](const ComponentSpec& spec, O& o) {
        o.parsed = parse_churn_events(str_cat(spec.name, ".events"), o.events);
        if (o.parsed.empty()) throw ConfigError(str_cat(spec.name, ".events lists no change"));
      });
}

Registry<Churn> builtin_churn() {
  Registry<Churn> r("churn");
  r.add<Calm, CalmOptions>("calm", "every worker takes part in every step (the default)");
  r.add<ScriptedChurn, ScriptOptions>(
      "script", "workers leave and join at the steps given; a joiner takes the weights and optimizer state of "
                "worker 0's group (docs/topologies.md, \"Workers that leave and join\")");
  return r;
}

}  // namespace laconic::train
