#pragma once
// Typed facts about how a run ran (rows of run_facts, docs/schema.md): each key and its values are
// written here once, so that the controller that records them and the readers (runs, show, the
// reports, the UI's API, advise) never compare a fact's text of their own. RunFacts is a run's
// facts read back once, beside the ResolvedRun it holds.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "engine/core/resolved_run.hpp"
#include "storage/database.hpp"

namespace laconic::storage {

/// How a run's step and epoch times were taken (run fact `rank_clock`).
enum class RankClock {
  Unrecorded,  ///< a run recorded before the fact was
  Wall,        ///< "wall": each rank a process, timed on the wall clock
  ThreadCpu,   ///< "thread_cpu": ranks are threads of one process, timed on their own CPU time (derived)
};

/// How rank 0 measured its wait (run fact `wait_measured`).
enum class WaitMeasured {
  Unrecorded,      ///< not recorded (a thread-rank run, or one recorded before the fact was)
  ArrivalBoard,    ///< "arrival_board": the ranks' arrivals on one host's clock
  MessageStamps,   ///< "message_stamps": stamps carried in the messages, clocks aligned to an error
  Barrier,         ///< "barrier": a barrier just before the exchange (elastic runs)
};

/// The keys of run_facts that laconic reads back, each written once here (docs/schema.md lists
/// every fact; those only shown, as show and the run page list them, are named where written).
namespace fact {
inline constexpr const char* kRankClock = "rank_clock";
inline constexpr const char* kWaitMeasured = "wait_measured";
inline constexpr const char* kClockOffsetError = "clock_offset_error";
inline constexpr const char* kWorkingDirectory = "working_directory";
inline constexpr const char* kLauncher = "launcher";
inline constexpr const char* kHosts = "hosts";
inline constexpr const char* kCores = "cores";
inline constexpr const char* kRanksOnHost = "ranks_on_host";
inline constexpr const char* kOversubscribed = "oversubscribed";
inline constexpr const char* kHostDemand = "host_demand";
inline constexpr const char* kOverrides = "overrides";
inline constexpr const char* kDropped = "dropped";
inline constexpr const char* kAdvice = "advice";
inline constexpr const char* kElasticRelaunches = "elastic_relaunches";
}  // namespace fact

/// The fact's text: "wall" or "thread_cpu" ("" for Unrecorded).
const char* rank_clock_text(RankClock clock);
/// The fact's text: "arrival_board", "message_stamps" or "barrier" ("" for Unrecorded).
const char* wait_measured_text(WaitMeasured how);
/// A boolean fact's text: "true" or "false".
const char* fact_flag_text(bool value);

/// The clock a run's facts name (Unrecorded when they name none, or one this build does not know).
RankClock rank_clock_of(const std::map<std::string, std::string>& facts);

/// The clock of every run that recorded one, by run id.
std::map<std::int64_t, RankClock> rank_clocks_of_runs(Database& db);

/// A run's facts, read back once and typed.
struct RunFacts {
  /// What the engine resolved the run into (fact `resolved`); nothing for a run recorded before it.
  std::optional<ResolvedRun> resolved;
  RankClock rank_clock = RankClock::Unrecorded;
  WaitMeasured wait_measured = WaitMeasured::Unrecorded;
  /// The worst error of the aligned clocks, in seconds, when the wait was measured by message
  /// stamps; NaN otherwise.
  double clock_offset_error = std::numeric_limits<double>::quiet_NaN();
  bool oversubscribed = false;
  /// What the ranks asked of the host's cores over the run: host_demand (else ranks_on_host) over
  /// cores; NaN when not recorded.
  double host_load = std::numeric_limits<double>::quiet_NaN();
  std::string working_directory;  ///< "" when not recorded
  std::string overrides;          ///< the run's --set assignments, "" for none
  std::string dropped;            ///< why the run's ranks were dropped, "" when they were not
  std::string advised_link;       ///< the link laconic advise predicted the run for, "" for none
  /// Every fact as recorded, key to text: what show and the UI list.
  std::map<std::string, std::string> text;

  bool thread_ranks() const { return rank_clock == RankClock::ThreadCpu; }
  /// Where it trained ("cpu", "cuda:0"): its resolved run's device; "cpu" for a run recorded
  /// before laconic could train anywhere else.
  std::string device() const { return resolved ? resolved->device : "cpu"; }
  /// The device, and where the codecs ran when elsewhere: "cpu", "cuda:0 (codecs on the cpu)";
  /// what the report's "trained on" and the UI's run page say.
  std::string trained_on() const;
  /// Server ranks took part: the resolved world is larger than its workers. For a run recorded
  /// before the resolved fact, nothing (the reader infers it from what the ranks recorded).
  std::optional<bool> has_servers() const;

  /// The facts read from their recorded text.
  static RunFacts read(std::map<std::string, std::string> text);
};

/// The facts of a run (empty ones for an unknown run).
RunFacts run_facts_of(Database& db, std::int64_t run_id);

}  // namespace laconic::storage
