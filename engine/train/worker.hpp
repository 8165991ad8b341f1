#pragma once
// The training loop of one worker process: its shard, its model replica, and the exchange with
// the other workers through the topology, step after step, reporting every measurement.
#include <functional>
#include <memory>

#include "engine/comm/communicator.hpp"
#include "engine/comm/network.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/core/callbacks.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/metrics.hpp"
#include "engine/core/run_config.hpp"
#include "engine/core/worker_message.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/topology/topology.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/data/dataset.hpp"
#include "engine/train/optim/lr_schedule.hpp"
#include "engine/train/models/model.hpp"
#include "engine/train/optim/optimizer.hpp"
#include "engine/train/churn.hpp"
#include "engine/train/stopping.hpp"

namespace laconic::train {

/// Injected slowness (the schedules' common fields): the `count` highest worker ranks sleep
/// `delay` x uniform(1 - jitter, 1 + jitter) seconds per step after their backward pass (before
/// it when the exchange overlaps backward, so that the delay holds the gradient back), so that
/// stale-sync and async can be studied on one machine.
struct Stragglers {
  std::int64_t count = 0;
  double delay = 0;   ///< seconds
  double jitter = 0;  ///< in [0, 1]

  /// Reads and checks the fields of a resolved schedule spec (ConfigError naming them).
  static Stragglers from(const ComponentSpec& schedule);
  /// True when worker `rank` of `workers` is one of the stragglers.
  bool slows(int rank, std::int64_t workers) const { return rank >= workers - count; }
};

/// The components a run is made of, built from its RunConfig (see engine/catalog.hpp).
struct WorkerParts {
  std::unique_ptr<Dataset> dataset;
  std::unique_ptr<Model> model;  ///< must be built after torch::manual_seed(config.seed)
  std::unique_ptr<Optimizer> optimizer;
  /// diloco's outer optimizers (schedule::ScheduleTraits::outer_optimizer), one per fragment of
  /// the model (one without Streaming DiLoCo's fragments); none otherwise.
  std::vector<std::unique_ptr<Optimizer>> outer_optimizers;
  std::unique_ptr<topology::Topology> topology;
  std::unique_ptr<schedule::Schedule> schedule;
  std::unique_ptr<compress::Compressor> compressor;
  /// A compressor of the run's kind for some of the model's layers (an overlapped exchange
  /// gives every bucket its own), seeded as given.
  std::function<std::unique_ptr<compress::Compressor>(const std::vector<compress::LayerShape>&,
                                                      compress::CompressorSeed)>
      compressor_for_layers;
  std::unique_ptr<comm::NetworkModel> network;  ///< projects communication onto a named link
  Stragglers stragglers;
  std::unique_ptr<LrSchedule> lr_schedule;  ///< empty: the optimizer's rate throughout
  ComponentSpec lr_schedule_spec;           ///< resolved, for its common fields
  std::unique_ptr<StopRule> stop_rule;      ///< empty: every epoch runs
  std::unique_ptr<Churn> churn;             ///< workers that leave and join; empty: none
  std::string device = "cpu";               ///< where the worker trains, as LibTorch names it (device.hpp)
  bool staged_gradient = false;             ///< the exchange works on a host copy of the gradient (on_device.hpp)
  /// Where the rank marks its phase and progress for the controller's hang detection (the
  /// worker process sends it on; engine/core/liveness.hpp); by default one nobody watches.
  Liveness* liveness = &unwatched_liveness();
};

/// What the worker reached.
struct WorkerResult {
  std::int64_t steps = 0;            ///< steps taken
  double final_test_accuracy = -1;   ///< rank 0 only; -1 where this rank did not evaluate
  std::uint64_t parameter_hash = 0;  ///< model_hash(Parameters) of the replica at the end
};

using ProgressFn = std::function<void(const ProgressMessage&)>;

/// Trains `parts` for config.epochs on this rank's shard. Records per-step and per-epoch
/// metrics into `sink` (keys in docs/schema.md); rank 0 evaluates on the test split at the end
/// of each epoch and reports progress through `progress` (may be empty). Throws CommError when a
/// peer is lost or a collective times out, InvariantError when replicas start from different
/// weights.
/// `callbacks` (may be null) are the experiment file's functions (lr_schedule, on_epoch_end).
/// With `checkpointing`, the worker saves a checkpoint before every `every`-th step (after
/// flushing `sink`) and may start from one (engine/train/checkpoint.hpp); the parts must be
/// built from the same config as the saved ones. A NaN or infinite training loss, or one above
/// config.divergence_factor x the first step's, throws DivergedError after recording it.
WorkerResult run_worker(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
                        const ProgressFn& progress = {}, RunCallbacks* callbacks = nullptr,
                        const Checkpointing& checkpointing = {});

/// The process of a parameter server (a rank >= config.workers): joins the start check, then
/// serves rounds (engine/topology/parameter_server/) until every worker has finished,
/// recording each round's traffic and times under its own rank. With pull = "weights" it
/// steps `parts.optimizer` on its copy of the model. A synchronous server checkpoints like a
/// worker (before round `every` x k, which the workers' step of that number waits for: its
/// weights, optimizer and compressor state) and resumes from one; an asynchronous server
/// (stale_sync, async) has no round every worker passes, and refuses `checkpointing` (ConfigError).
void run_server(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
                RunCallbacks* callbacks = nullptr, const Checkpointing& checkpointing = {});

/// This rank's part of the run, by its rank: the worker loop for the ranks below config.workers,
/// a parameter server's rounds for the ranks after them (the one place that tells them apart;
/// `progress` only reaches a worker).
void run_rank(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
              const ProgressFn& progress = {}, RunCallbacks* callbacks = nullptr,
              const Checkpointing& checkpointing = {});

/// Steps each worker takes per epoch: its shard in batches, at most config.max_steps.
std::int64_t steps_per_epoch(const RunConfig& config, Dataset& dataset);

/// Throws InvariantError unless every rank's model has the same parameters (model_hash).
void check_identical_start(Model& model, comm::Communicator& comm);

}  // namespace laconic::train
