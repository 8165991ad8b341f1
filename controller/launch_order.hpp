#pragma once
// What every rank of a run is told to start it: which run of the plan (its index, and the name
// it must have there), where its ranks meet, and the run as the controller resolved it (world
// size, placement, ...; engine/core/resolved_run.hpp). One type with one encoding, on every
// path a rank starts by: a fork of the controller (WorkerArgs), an exec'd `laconic worker
// --order JSON`, and the relay to a launched sweep's ranks on other hosts (RankOrder).
#include <cstddef>
#include <optional>
#include <string>

#include "engine/core/resolved_run.hpp"

namespace laconic::controller {

struct LaunchOrder {
  std::size_t run_index = 0;
  std::string run_name;      ///< refuse to run when the plan names run_index differently ("" = skip)
  std::string store_prefix;  ///< the run's keys in the ranks' store ("" for a private directory)
  ResolvedRun resolved;

  int world() const { return resolved.world_size; }
  /// Ranks one process trains: every rank of the run as threads (placement = threads()), else 1.
  int ranks_per_process() const { return resolved.thread_ranks() ? resolved.world_size : 1; }
  /// Processes the run starts: one per rank, or one for all of them.
  int processes() const { return resolved.world_size / ranks_per_process(); }

  /// One line of JSON: {"run_index", "run_name", "store_prefix", "resolved": {...}}.
  std::string to_json() const;
  /// The text read back; nothing for text that is not an order (or whose resolved run is of
  /// another version).
  static std::optional<LaunchOrder> from_json(const std::string& text);

  bool operator==(const LaunchOrder&) const = default;
};

}  // namespace laconic::controller
