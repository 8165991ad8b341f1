#include "engine/train/churn.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "engine/core/error.hpp"

namespace laconic::train {

std::vector<int> Churn::present(std::int64_t step, std::int64_t workers) const {
  std::vector<bool> in(static_cast<std::size_t>(workers), true);
  for (const ChurnEvent& e : events_through(step, workers)) {
    if (e.step > step) break;
    for (int r : e.ranks) in.at(static_cast<std::size_t>(r)) = e.join;
  }
  std::vector<int> out;
  for (std::size_t r = 0; r < in.size(); ++r)
    if (in[r]) out.push_back(static_cast<int>(r));
  return out;
}

JoinState Churn::join_state(std::int64_t step, int rank, std::int64_t workers) const {
  JoinState state = JoinState::Copied;
  for (const ChurnEvent& e : events_through(step, workers)) {
    if (e.step > step) break;
    if (e.join && std::find(e.ranks.begin(), e.ranks.end(), rank) != e.ranks.end()) state = e.state;
  }
  return state;
}

bool Churn::any_join(JoinState state, std::int64_t workers) const {
  const auto& all = events_through(0, workers);
  return std::any_of(all.begin(), all.end(), [state](const ChurnEvent& e) { return e.join && e.state == state; });
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

namespace {

const char* const kJoinStateDoc =
    "what a joiner takes besides worker 0's weights: \"copied\" worker 0's optimizer state; \"fresh\" the optimizer "
    "and error-feedback state of the run's start; \"averaged\" the mean of the staying workers' optimizer states "
    "(these two under local SGD and DiLoCo only); a leave ignores it";
const std::vector<std::pair<JoinState, std::string>> kJoinStates = {
    {JoinState::Copied, "copied"}, {JoinState::Fresh, "fresh"}, {JoinState::Averaged, "averaged"}};

// The join state a word of a script names; nullopt for another word.
std::optional<JoinState> join_state_named(const std::string& word) {
  for (const auto& [state, name] : kJoinStates)
    if (name == word) return state;
  return std::nullopt;
}

const std::string& join_state_name(JoinState state) {
  for (const auto& [s, name] : kJoinStates)
    if (s == state) return name;
  return kJoinStates.front().second;
}

// A uniform draw in [0, 1) from (seed, step, rank, what) alone: splitmix64 over their mix.
double uniform_at(std::int64_t seed, std::int64_t step, std::int64_t rank, std::uint64_t what) {
  std::uint64_t z = static_cast<std::uint64_t>(seed) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(step) << 20 ^
                    static_cast<std::uint64_t>(rank) << 4 ^ what;
  for (int round = 0; round < 2; ++round) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
  }
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

const std::vector<ChurnEvent>& RandomChurn::events_through(std::int64_t step, std::int64_t workers) const {
  if (back_at_.empty()) back_at_.assign(static_cast<std::size_t>(workers), 0);
  for (; drawn_ < step; ++drawn_) {
    const std::int64_t s = drawn_ + 1;
    ChurnEvent joins{true, {}, s, options_.state}, leaves{false, {}, s};
    for (std::size_t r = 1; r < back_at_.size(); ++r) {
      const auto rank = static_cast<std::int64_t>(r);
      if (back_at_[r] == s) {
        back_at_[r] = 0;
        joins.ranks.push_back(static_cast<int>(r));
      } else if (back_at_[r] == 0 && uniform_at(options_.seed, s, rank, 1) < options_.leave_rate) {
        // Geometric on 1, 2, ... with mean m: ceil(ln u / ln(1 - 1/m)); always 1 for m = 1.
        const double p = 1.0 / options_.mean_downtime;
        const double u = 1.0 - uniform_at(options_.seed, s, rank, 2);  // in (0, 1]
        const double down = p >= 1 ? 1.0 : std::max(1.0, std::ceil(std::log(u) / std::log1p(-p)));
        back_at_[r] = s + static_cast<std::int64_t>(down);
        leaves.ranks.push_back(static_cast<int>(r));
      }
    }
    if (!joins.ranks.empty()) events_.push_back(std::move(joins));
    if (!leaves.ranks.empty()) events_.push_back(std::move(leaves));
  }
  return events_;
}

OptionFields<RandomChurnOptions> RandomChurnOptions::fields() {
  using O = RandomChurnOptions;
  return OptionFields<O>()
      .number("leave_rate", &O::leave_rate, "the chance that a worker present (not worker 0) leaves before a step",
              closed(0, 1))
      .number("mean_downtime", &O::mean_downtime,
              "the mean steps a worker that left stays away (geometric on 1, 2, ...)", at_least(1))
      .integer("seed", &O::seed, "the draws' seed; 0: the run's seed", at_least(0))
      .choice("state", &O::state, kJoinStateDoc, kJoinStates);
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
    std::string state, extra;
    const bool stated = static_cast<bool>(words >> state);
    const bool state_ok = !stated || (verb == "join" && join_state_named(state));
    if (!read || (verb != "leave" && verb != "join") || at != "at" || step < 0 || !state_ok || (words >> extra))
      throw ConfigError(str_cat(field,
                                ": each change is \"leave RANKS at STEP\" or \"join RANKS at STEP\" (RANKS "
                                "a comma list; a join may end in \"copied\", \"fresh\" or \"averaged\"), separated by ';', "
                                "got \"",
                                part, "\""));
    ChurnEvent event{verb == "join", {}, step, stated ? *join_state_named(state) : JoinState::Copied};
    std::stringstream list(ranks);
    for (std::string r; std::getline(list, r, ',');) {
      char* end = nullptr;
      const long rank = std::strtol(r.c_str(), &end, 10);
      if (r.empty() || *end != '\0') throw ConfigError(str_cat(field, ": \"", r, "\" in \"", part, "\" is not a rank"));
      event.ranks.push_back(static_cast<int>(rank));
    }
    if (!events.empty() && event.step < events.back().step)
      throw ConfigError(
          str_cat(field, ": changes must come in step order, ", part, " follows step ", events.back().step));
    events.push_back(std::move(event));
  }
  return events;
}

std::string churn_events_text(const std::vector<ChurnEvent>& events) {
  std::string text;
  for (const ChurnEvent& e : events) {
    std::string ranks;
    for (int r : e.ranks) ranks += str_cat(ranks.empty() ? "" : ",", r);
    text += str_cat(text.empty() ? "" : "; ", e.join ? "join " : "leave ", ranks, " at ", e.step,
                    e.join && e.state != JoinState::Copied ? " " + join_state_name(e.state) : "");
  }
  return text;
}

ComponentSpec combine_churn_changes(const std::vector<ComponentSpec>& parts) {
  if (parts.empty()) throw ConfigError("churn = { } lists no change: give leave { ... } and join { ... } in it");
  std::vector<ChurnEvent> events;
  for (const ComponentSpec& part : parts) {
    if (part.kind != "churn" || (part.name != "leave" && part.name != "join"))
      throw ConfigError(
          str_cat("churn = { ... } lists changes, leave { ranks = { 3 }, step = 200 } and join { ... }; got ",
                  part.kind, " ", part.name));
    const ChangeOptions o = ChangeOptions::fields().read(part);
    events.push_back(ChurnEvent{part.name == "join", std::vector<int>(o.ranks.begin(), o.ranks.end()), o.step,
                                part.name == "join" ? o.state : JoinState::Copied});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const ChurnEvent& a, const ChurnEvent& b) { return a.step < b.step; });
  return ComponentSpec{"churn", "script", {{"events", Value{churn_events_text(events)}}}};
}

OptionFields<ChangeOptions> ChangeOptions::fields() {
  using O = ChangeOptions;
  return OptionFields<O>()
      .integers("ranks", &O::ranks, "the ranks that leave (or join); worker 0 stays")
      .integer("step", &O::step, "before this global step (counted from 0)", at_least(0))
      .choice("state", &O::state, kJoinStateDoc, kJoinStates)
      .rule([](const ComponentSpec& spec, O& o) {
        if (o.ranks.empty()) throw ConfigError(str_cat(spec.name, ".ranks names no rank"));
      });
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
      "script",
      "workers leave and join at the steps given; a joiner takes the weights and optimizer state of "
      "worker 0's group (docs/topologies.md, \"Workers that leave and join\")");
  r.add<RandomChurn, RandomChurnOptions>(
      "random",
      "workers leave at random and come back after a random downtime, drawn from the seed; the changes "
      "drawn are recorded (member_change)");
  r.add<ChurnChange<false>, ChangeOptions>(
      "leave",
      "the ranks given leave before the step given; a list, churn = { leave { ... }, join { ... } }, is a "
      "script of changes");
  r.add<ChurnChange<true>, ChangeOptions>(
      "join", "the ranks given come back before the step given, with worker 0's weights and optimizer state");
  return r;
}

}  // namespace laconic::train
