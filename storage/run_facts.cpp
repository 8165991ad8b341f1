#include "storage/run_facts.hpp"

#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

#include "storage/queries.hpp"

namespace laconic::storage {

namespace {

constexpr std::string_view kWall = "wall";
constexpr std::string_view kThreadCpu = "thread_cpu";
constexpr std::string_view kArrivalBoard = "arrival_board";
constexpr std::string_view kMessageStamps = "message_stamps";
constexpr std::string_view kBarrier = "barrier";

RankClock parse_rank_clock(std::string_view text) {
  if (text == kWall) return RankClock::Wall;
  if (text == kThreadCpu) return RankClock::ThreadCpu;
  return RankClock::Unrecorded;
}

WaitMeasured parse_wait_measured(std::string_view text) {
  if (text == kArrivalBoard) return WaitMeasured::ArrivalBoard;
  if (text == kMessageStamps) return WaitMeasured::MessageStamps;
  if (text == kBarrier) return WaitMeasured::Barrier;
  return WaitMeasured::Unrecorded;
}

const std::string* find_text(const std::map<std::string, std::string>& facts, const char* key) {
  const auto it = facts.find(key);
  return it == facts.end() ? nullptr : &it->second;
}

std::string text_or_empty(const std::map<std::string, std::string>& facts, const char* key) {
  const std::string* text = find_text(facts, key);
  return text ? *text : "";
}

// A fact as a number; NaN when absent or not a number.
double number_of(const std::map<std::string, std::string>& facts, const char* key) {
  const std::string* text = find_text(facts, key);
  if (!text) return std::nan("");
  try {
    return std::stod(*text);
  } catch (const std::exception&) {
    return std::nan("");
  }
}

// host_demand, else ranks_on_host (runs recorded before host_demand was), over cores.
double host_load_of(const std::map<std::string, std::string>& facts) {
  const double cores = number_of(facts, fact::kCores);
  if (!(cores > 0)) return std::nan("");
  const double demand = number_of(facts, fact::kHostDemand);
  return (std::isnan(demand) ? number_of(facts, fact::kRanksOnHost) : demand) / cores;
}

// The link of the advice fact ({"version": 1, "link": "100Mbit,1ms", ...}); "" when it names none.
std::string advised_link_of(const std::map<std::string, std::string>& facts) {
  const std::string* text = find_text(facts, fact::kAdvice);
  if (!text) return "";
  const auto advice = nlohmann::json::parse(*text, nullptr, false);
  if (advice.is_object() && advice.contains("link") && advice["link"].is_string())
    return advice["link"].get<std::string>();
  return "";
}

}  // namespace

const char* rank_clock_text(RankClock clock) {
  switch (clock) {
    case RankClock::Wall: return kWall.data();
    case RankClock::ThreadCpu: return kThreadCpu.data();
    case RankClock::Unrecorded: break;
  }
  return "";
}

const char* wait_measured_text(WaitMeasured how) {
  switch (how) {
    case WaitMeasured::ArrivalBoard: return kArrivalBoard.data();
    case WaitMeasured::MessageStamps: return kMessageStamps.data();
    case WaitMeasured::Barrier: return kBarrier.data();
    case WaitMeasured::Unrecorded: break;
  }
  return "";
}

const char* fact_flag_text(bool value) { return value ? "true" : "false"; }

RankClock rank_clock_of(const std::map<std::string, std::string>& facts) {
  const std::string* text = find_text(facts, fact::kRankClock);
  return text ? parse_rank_clock(*text) : RankClock::Unrecorded;
}

std::map<std::int64_t, RankClock> rank_clocks_of_runs(Database& db) {
  std::map<std::int64_t, RankClock> out;
  for (const auto& [run_id, text] : fact_of_runs(db, fact::kRankClock)) out[run_id] = parse_rank_clock(text);
  return out;
}

std::string RunFacts::trained_on() const {
  const std::string codecs = resolved ? resolved->codecs_on : "cpu";
  return device() == codecs ? device() : str_cat(device(), " (codecs on the ", codecs, ")");
}

std::optional<bool> RunFacts::has_servers() const {
  if (!resolved) return std::nullopt;
  return resolved->world_size > resolved->workers;
}

RunFacts RunFacts::read(std::map<std::string, std::string> text) {
  RunFacts out;
  if (const std::string* resolved = find_text(text, ResolvedRun::kFact)) out.resolved = ResolvedRun::from_json(*resolved);
  out.rank_clock = rank_clock_of(text);
  if (const std::string* how = find_text(text, fact::kWaitMeasured)) out.wait_measured = parse_wait_measured(*how);
  if (out.wait_measured == WaitMeasured::MessageStamps) out.clock_offset_error = number_of(text, fact::kClockOffsetError);
  out.oversubscribed = text_or_empty(text, fact::kOversubscribed) == fact_flag_text(true);
  out.host_load = host_load_of(text);
  out.working_directory = text_or_empty(text, fact::kWorkingDirectory);
  out.overrides = text_or_empty(text, fact::kOverrides);
  out.dropped = text_or_empty(text, fact::kDropped);
  out.advised_link = advised_link_of(text);
  out.text = std::move(text);
  return out;
}

RunFacts run_facts_of(Database& db, std::int64_t run_id) { return RunFacts::read(facts_of(db, run_id)); }

}  // namespace laconic::storage
