#pragma once
// The ranks of a run as threads of one process (placement = threads()): each its own model
// replica, optimizer, compressor and error-feedback state, data shard and random streams, all
// exchanging through one in-memory transport (comm::MemoryNetwork) with the Communicator's own
// collectives, so that the run gives what a process per rank gives, bit for bit where the
// order of every sum is the same. Each rank is timed on its thread's CPU time
// (engine/core/rank_clock.hpp).
#include <deque>

#include "engine/catalog.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/metrics.hpp"
#include "engine/train/worker.hpp"

namespace laconic::engine {

/// Where the thread ranks report.
struct ThreadRanksReport {
  MetricsSink& sink;               ///< every rank's metrics (it must take records from any thread)
  std::deque<Liveness>& liveness;  ///< one per rank, in rank order
  train::ProgressFn progress{};    ///< rank 0's progress (may be empty)
};

/// Trains every rank of `config` (workers and servers) as a thread of this process and returns
/// once all have finished. `callbacks` (may be null) are called by one rank at a time. When a
/// rank fails, the others stop waiting for it (CommError) and the first failure is rethrown:
/// a DivergedError or a rank's own error rather than the others' CommErrors.
void train_thread_ranks(const EngineCatalog& catalog, const RunConfig& config, RunCallbacks* callbacks,
                        const ThreadRanksReport& report);

}  // namespace laconic::engine
