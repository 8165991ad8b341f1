#pragma once
// A Schedule decides what one training step does and when workers communicate. It sees the
// worker only through StepActions, so schedules know nothing of models or tensors.
#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/component.hpp"
#include "engine/core/state_io.hpp"
#include "engine/core/step_value.hpp"

namespace laconic::schedule {

/// The operations a worker offers its schedule for one step.
class StepActions {
 public:
  virtual ~StepActions() = default;
  /// Forward and backward pass on this worker's next batch; leaves the local gradient.
  virtual void compute_gradients() = 0;
  /// Replaces the local gradient by the (compressed) average over workers, via the topology.
  virtual void exchange_gradients() = 0;
  /// Replaces the local gradient by its mean over this rank's island (network = cluster { }), in
  /// fp32 over the island's own links: DiLoCo across islands, synchronous inside each.
  virtual void average_gradients_in_island() = 0;
  /// Applies the optimizer to the model with the current gradient.
  virtual void apply_update() = 0;
  /// Averages the models over the topology: with allreduce, every worker ends with the mean of
  /// the changes since the last average (compressed like a gradient); with gossip, each worker
  /// mixes its model with its neighbours'. `at` is the step's point: diloco's outer rate may be
  /// the file's function of it.
  virtual void average_models(const StepPoint& at) = 0;
  /// Streaming DiLoCo: averages fragment `fragment` of `fragments` (the model's layers cut into
  /// that many runs of consecutive layers of about equal size) as average_models() averages the
  /// whole model, with the fragment's own compressor and outer optimizer, into the shared
  /// weights; the local weights change only at apply_fragment().
  virtual void average_fragment(int fragment, int fragments, const StepPoint& at) = 0;
  /// Streaming DiLoCo: mixes fragment `fragment`'s shared weights into the local ones, local =
  /// alpha local + (1 - alpha) shared; a later step than average_fragment()'s when the exchange
  /// overlaps inner steps.
  virtual void apply_fragment(int fragment, double alpha) = 0;
  /// True when the topology mixes models rather than gradients (gossip): a synchronous step is
  /// then compute, local update, mix.
  virtual bool topology_mixes_models() const = 0;
};

/// What a schedule is, known from its options without building it (Registry::traits).
struct ScheduleTraits {
  /// Set for schedules run by an asynchronous parameter server (stale_sync, async): how many
  /// steps a worker may run ahead of the slowest.
  std::optional<std::int64_t> staleness_bound;
  /// The schedule averages whole models through the topology (local_sgd, diloco), so the
  /// topology must hand back the average of what it is given: a parameter server with pull =
  /// "gradients".
  bool averages_models = false;
  /// DiLoCo's outer optimizer (an optimizer's resolved spec): the workers' averaged change is
  /// its pseudo-gradient, and it steps the shared weights every worker starts a round from.
  /// Unset: the average itself is the shared weights (local SGD).
  std::optional<ComponentSpec> outer_optimizer{};
  /// With outer_optimizer: how many fragments of the model are averaged on staggered steps
  /// (Streaming DiLoCo), each with an outer optimizer of its own; 1 = the whole model at once.
  std::int64_t fragments = 1;
  /// With outer_optimizer: the model is averaged fragment by fragment (average_fragment() and
  /// apply_fragment(): fragments, an overlap or a mixing factor), not by average_models().
  bool streaming = false;
  /// Streaming DiLoCo's tau: inner steps a fragment's exchange runs under before it is applied.
  std::int64_t overlap = 0;
  /// Every worker exchanges its gradient right after computing it, every step, in lock-step with
  /// the others (synchronous): an overlapped exchange has a backward pass to overlap, and all
  /// workers reach each evaluation together.
  bool exchanges_each_gradient = false;
  /// DiLoCo across islands (diloco { islands = true }): every inner step averages the gradient
  /// inside each island of the run's cluster (network = cluster { }).
  bool synchronous_islands = false;

  bool operator==(const ScheduleTraits& other) const = default;
};

/// When a worker that comes back joins a schedule of rounds (local SGD, DiLoCo): at the next
/// round's start, or at once, mid-round, with a peer's local weights.
enum class JoinPolicy { NextRound, Now };

class Schedule {
 public:
  using Traits = ScheduleTraits;

  explicit Schedule(ScheduleTraits traits = {}) : traits_(traits) {}
  virtual ~Schedule() = default;
  virtual std::string name() const = 0;
  const ScheduleTraits& traits() const { return traits_; }
  std::optional<std::int64_t> staleness_bound() const { return traits_.staleness_bound; }
  /// Runs the step at `at` (global step and epoch, from 0; the file's functions for fields
  /// given per step).
  virtual void step(StepActions& actions, const StepPoint& at) = 0;
  /// Writes the counters a checkpoint must keep and reads them back (local SGD's steps since
  /// the last average). Stateless schedules keep the defaults.
  virtual void save_state(StateWriter& out) const { (void)out; }
  virtual void load_state(StateReader& in) { (void)in; }

  // Workers that leave and join (churn; engine/train/worker.cpp).
  /// A step this worker sits out: its counters move as if it had stepped, so that a worker away
  /// knows, as those present do, where the rounds begin.
  virtual void pass(const StepPoint& at) { (void)at; }
  /// The replicas are equal before the next step (a round begins; every step under synchronous SGD).
  virtual bool round_starts() const { return true; }
  /// Workers that come back may join before the next step: at a round's start, or at any step
  /// when the schedule's join policy is "now".
  virtual bool admits_joiners() const { return true; }

 private:
  ScheduleTraits traits_;
};

}  // namespace laconic::schedule
