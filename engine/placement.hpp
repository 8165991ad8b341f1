#pragma once
// Where a run's ranks live on the host (the experiment field `placement`): a process each, with
// a core each and Gloo between them (the default), or threads of one process that exchange
// through memory, as many as the run has ranks whatever the host's cores (docs/dsl.md,
// "placement"). What decides accuracy (gradients, compressors and their state, the sums) is the
// same either way; the time of thread ranks is their threads' CPU time, their waiting derived
// and their communication projected (engine/core/rank_clock.hpp).
#include <string>

#include "engine/core/option_fields.hpp"
#include "engine/core/registry.hpp"

namespace laconic::engine {

/// What a placement is, asked of the registry without building it.
struct PlacementTraits {
  bool threads = false;  ///< the ranks are threads of one process
  bool operator==(const PlacementTraits&) const = default;
};

class Placement {
 public:
  using Traits = PlacementTraits;
  explicit Placement(Traits traits) : traits_(traits) {}
  virtual ~Placement() = default;
  virtual std::string name() const = 0;
  const Traits& traits() const { return traits_; }

 private:
  Traits traits_;
};

struct ProcessesOptions {
  static OptionFields<ProcessesOptions> fields() { return {}; }
  static PlacementTraits traits(const ProcessesOptions&) { return {.threads = false}; }
};

/// A process per rank (forked by the controller, or one rank of a launcher each).
class ProcessesPlacement : public Placement {
 public:
  explicit ProcessesPlacement(ProcessesOptions options) : Placement(ProcessesOptions::traits(options)) {}
  std::string name() const override { return "processes"; }
};

struct ThreadsOptions {
  static OptionFields<ThreadsOptions> fields() { return {}; }
  static PlacementTraits traits(const ThreadsOptions&) { return {.threads = true}; }
};

/// Every rank a thread of one worker process.
class ThreadsPlacement : public Placement {
 public:
  explicit ThreadsPlacement(ThreadsOptions options) : Placement(ThreadsOptions::traits(options)) {}
  std::string name() const override { return "threads"; }
};

Registry<Placement> builtin_placements();

}  // namespace laconic::engine
