#pragma once
// Which rank is slow: from a run's per-rank rows, the rank the others waited for most (on each
// exchange, the last to arrive is the rank whose time_wait is the smallest; the others' waits
// are what it cost them) and, per phase of the step, the slowest rank against the median rank.
#include <cstdint>
#include <string>
#include <vector>

#include "storage/database.hpp"

namespace laconic::reports {

/// One phase of the step (forward, backward, optimizer, compress, straggler delay): its slowest
/// rank by mean seconds per step, and the median of the ranks' means.
struct PhaseSlowest {
  std::string phase;    ///< "forward", "backward", "optimizer", "compress", "straggler delay"
  int rank = -1;        ///< -1: no rank recorded it
  double mean = 0;      ///< the slowest rank's mean seconds per step
  double median = 0;    ///< the median over ranks of their means

  /// mean / median; NaN when the median is 0 (a straggler's delay: the others sleep none).
  double ratio() const;
};

struct SlowRank {
  int ranks = 0;
  /// Exchanges whose time_wait every rank recorded.
  std::int64_t exchanges = 0;
  /// Of those, the ones with a last arrival: the others waited at least 1 ms longer, on average,
  /// than the rank that waited least (below that, nobody was waited for).
  std::int64_t waited_exchanges = 0;
  /// The rank whose last arrivals cost the others the most waiting in all; -1 when nobody was
  /// waited for.
  int waited_for = -1;
  /// The exchanges it arrived last at.
  std::int64_t arrived_last = 0;
  /// The others' waiting it caused, in seconds over the run, and as a share of all the waiting
  /// any rank recorded.
  double caused_seconds = 0, caused_share = 0;
  std::vector<PhaseSlowest> phases;
};

/// The phases' names, in the order SlowRank::phases lists those recorded.
std::vector<std::string> slow_rank_phases();

/// Reads the run's per-rank rows of time_wait and the step's phases (worker ranks only, training
/// steps only). A run of one worker gives ranks = 1 and nothing else.
SlowRank slow_rank_of(storage::Database& db, std::int64_t run_id, std::int64_t workers);

}  // namespace laconic::reports
