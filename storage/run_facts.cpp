#include "storage/run_facts.hpp"

#include <string_view>

#include "storage/queries.hpp"

namespace laconic::storage {

namespace {

constexpr std::string_view kWall = "wall";
constexpr std::string_view kThreadCpu = "thread_cpu";

RankClock parse_rank_clock(std::string_view text) {
  if (text == kWall) return RankClock::Wall;
  if (text == kThreadCpu) return RankClock::ThreadCpu;
  return RankClock::Unrecorded;
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

RankClock rank_clock_of(const std::map<std::string, std::string>& facts) {
  const auto it = facts.find(kRankClockFact);
  return it == facts.end() ? RankClock::Unrecorded : parse_rank_clock(it->second);
}

std::map<std::int64_t, RankClock> rank_clocks_of_runs(Database& db) {
  std::map<std::int64_t, RankClock> out;
  for (const auto& [run_id, text] : fact_of_runs(db, kRankClockFact)) out[run_id] = parse_rank_clock(text);
  return out;
}

}  // namespace laconic::storage
