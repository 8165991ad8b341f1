#pragma once
// Typed facts about how a run ran (rows of run_facts, docs/schema.md): each key and its values are
// written here once, so that the controller that records them and the readers (runs, show, the
// reports, the UI's API) never compare a fact's text of their own.
#include <cstdint>
#include <map>
#include <string>

#include "storage/database.hpp"

namespace laconic::storage {

/// How a run's step and epoch times were taken (run fact `rank_clock`).
enum class RankClock {
  Unrecorded,  ///< a run recorded before the fact was
  Wall,        ///< "wall": each rank a process, timed on the wall clock
  ThreadCpu,   ///< "thread_cpu": ranks are threads of one process, timed on their own CPU time (derived)
};

inline constexpr const char* kRankClockFact = "rank_clock";

/// The fact's text: "wall" or "thread_cpu" ("" for Unrecorded).
const char* rank_clock_text(RankClock clock);

/// The clock a run's facts name (Unrecorded when they name none, or one this build does not know).
RankClock rank_clock_of(const std::map<std::string, std::string>& facts);

/// The clock of every run that recorded one, by run id.
std::map<std::int64_t, RankClock> rank_clocks_of_runs(Database& db);

}  // namespace laconic::storage
