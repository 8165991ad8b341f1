#pragma once
// The worker's side of a schedule (schedule::StepActions): one object per run, holding the
// replica, its flat gradient and its shard, computing gradients, exchanging them through the
// topology (bucket by bucket while backward runs, under an overlapped exchange) and applying
// the update; the worker loop (engine/train/worker.cpp) drives it step by step.
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "engine/compress/compressor_group.hpp"
#include "engine/compress/random.hpp"
#include "engine/topology/bucketed_exchange.hpp"
#include "engine/train/gradient_hooks.hpp"
#include "engine/train/on_device.hpp"
#include "engine/train/worker.hpp"

namespace laconic::train {

// The worker's side of the schedule: one object per run, holding the replica and its gradient.
class Trainer : public schedule::StepActions {
 public:
  Trainer(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm);

  /// What compresses this worker's exchange: the run's compressor, or under an overlapped
  /// exchange its buckets' as one. The worker loop tells it the epoch and the step, and keeps its
  /// state in checkpoints.
  compress::Compressor& compressor();

  void begin_epoch(std::int64_t epoch);

  /// Continues the epoch at its step `index` (after begin_epoch(), when resuming).
  void skip_to(std::int64_t index);
  /// churn_batch = "global", before a step this worker trains among `members` (the workers
  /// present): its batch is its shard's at the epoch's step `index` (a worker back from away
  /// starts there), and the absent workers' examples of that step dealt out in turn among the
  /// members, its loss weighted by its share of the examples (examples x members / all of them),
  /// so that the members' average gradient is the mean over every example of the step.
  void share_step(const std::vector<int>& members, std::int64_t index);
  /// Where in its shard the next batch starts (churn: a worker away keeps its place, so a
  /// checkpoint keeps it too).
  std::size_t data_position() const { return position_; }
  void set_data_position(std::size_t position) { position_ = std::min(position, shard_.size()); }

  /// Its own state for checkpoints: the last average local SGD starts from (DiLoCo's shared
  /// weights), the stragglers' generator, under an overlapped exchange its buckets' compressors,
  /// DiLoCo's outer optimizers and, under an overlap, its exchanges in flight (the run's
  /// compressor is the worker loop's to keep). The restored compressors learn their epoch from the next
  /// advance().
  /// Also whether worker 0 recorded decoded_payloads (once per run), from checkpoint format 3 on.
  void save_state(StateWriter& out) const;
  void load_state(StateReader& in, std::uint64_t checkpoint_format);
  /// What a worker that comes back (churn) takes from worker 0 beside the weights and the
  /// optimizer's state: under a schedule of rounds, the last average and the outer optimizers'
  /// state; nothing under one that exchanges each gradient.
  void save_shared_state(StateWriter& out) const;
  void load_shared_state(StateReader& in);

  std::int64_t steps_per_epoch() const { return train::steps_per_epoch(config_, *parts_.dataset); }

  void compute_gradients() override;

  void exchange_gradients() override;
  void average_gradients_in_island() override;

  bool topology_mixes_models() const override { return parts_.topology->mixes_models(); }

  void average_models(const StepPoint& at) override;

  void average_fragment(int fragment, int fragments, const StepPoint& at) override;

  void apply_fragment(int fragment, double alpha) override;

  void apply_update() override;

  /// The step's seconds from `step_time`, its time on the rank's clock: itself for a rank with a
  /// core of its own; for a thread rank, with its derived wait and projected communication.
  double step_seconds(double step_time) const;

  /// A joiner's hand-over before the next step (churn or an elastic admission: its state sent or
  /// received, an averaged optimizer state's allreduce): that step's exchange counts its traffic
  /// (bytes_sent, bytes_received, bytes_dense, messages, link_bytes) and projects it onto the link
  /// like its own, and its measured seconds go into the step's time and time_communicate.
  void add_hand_over(const comm::ByteCounters& traffic, double seconds);
  /// Takes the hand-overs added since the last step into this step's exchange; returns their
  /// measured seconds, for the step's clock. Called once the schedule's step is done.
  double take_hand_over();

  /// Per-step measurements, in the order of docs/schema.md; `seconds` from step_seconds().
  /// Worker 0 adds decoded_payloads once, at its first step that exchanged a payload.
  void record_step(MetricsSink& sink, std::int64_t step, std::int64_t epoch, double wall, double seconds);

  double loss() const { return loss_; }

  /// sqrt(mean over workers of ||x_i - mean x||^2): how far gossip's replicas are apart. Its two
  /// allreduces are bookkeeping, outside every step's counters.
  double consensus_distance();

  /// The parameters, flattened in order.
  void read_model(std::vector<float>& out) const;

  void write_model(const std::vector<float>& in);
  std::vector<torch::Tensor>& params() { return params_; }

 private:
  /// DiLoCo's outer step: with the workers' mean change since the round began in model_, the
  /// outer optimizer steps the shared weights (anchor_) with the pseudo-gradient, and model_
  /// becomes them. Its seconds count as the optimizer's.
  void step_outer(const StepPoint& at);
  /// Sets the outer optimizer's rate for the step at `at` when the file gives it as a function.
  void set_outer_lr(Optimizer& outer, const StepPoint& at) const;
  /// Streaming DiLoCo: cuts the layers into `fragments` (fragment_bounds) and gives each a
  /// compressor of the run's kind for its layers, seeded per fragment, the same on every worker.
  void start_fragments(std::int64_t fragments);
  /// Fragment `fragment`'s elements of a flat model.
  std::span<float> fragment_of(std::vector<float>& flat, int fragment) const;
  /// Streaming DiLoCo with an overlap: a fragment's exchange between the step that began it and
  /// the one that applies it.
  struct InFlight {
    bool pending = false;
    comm::ByteCounters traffic{};  // what it sent, projected when it lands
    double compute = 0;            // seconds the inner steps since it began computed
  };
  /// This step applies `flight`: it records the compute it ran under and, on a modelled link,
  /// the part of its communication that compute did not hide.
  void land_overlapped(const InFlight& flight);
  /// Adds this step's compute to every exchange in flight.
  void count_compute_in_flight();
  void save_in_flight(StateWriter& out) const;
  void load_in_flight(StateReader& in);
  /// A staged gradient's copy to host memory (to_host) and back (to_device), each timed: the
  /// seconds, which count as compressing and decompressing; 0 when nothing is staged.
  double to_host();
  double to_device();
  /// The optimizer's step (or the exchanged update's) on the local weights.
  void apply_local_update();
  /// Sleeps the straggler's delay when this worker is one.
  void straggle();
  /// Scales the flat gradient to config_.clip_norm when its L2 norm is above it.
  void clip_gradient();
  /// average_models() across every rank: the topology's average of the models (gossip) or of
  /// the changes since the last average, then DiLoCo's outer step where there is one.
  void average_models_across(const StepPoint& at);

  /// Exchanges the gradient bucket by bucket while backward runs: a compressor of the run's
  /// kind per bucket (seeded per bucket, the same on every worker), and a hook per parameter
  /// that reports its gradient complete.
  void start_overlap(const topology::Bucketing& bucketing);

  const RunConfig& config_;
  WorkerParts& parts_;
  comm::Communicator& comm_;
  torch::Device device_;  // where the model, the batch and the optimizer's state are
  std::vector<torch::Tensor> params_;
  StagedGradient gradient_;  // the flat gradient on device_, and the host memory exchanged
  torch::Tensor flat_grad_;  // gradient_.on_device()
  std::vector<std::int64_t> shard_;
  std::size_t position_ = 0;
  // churn_batch = "global": every worker's shard of the epoch, this step's examples beyond its own
  // batch and its loss's weight; with churn, the examples of its step (recorded).
  std::vector<std::vector<std::int64_t>> shards_;
  std::vector<std::int64_t> shared_;
  double loss_weight_ = 1;
  std::int64_t examples_ = 0;
  const bool exchange_updates_;  // exchange = "update"
  double loss_ = 0, time_forward_ = 0, time_backward_ = 0, time_optimizer_ = 0, time_delay_ = 0;
  double time_update_ = 0;                  // exchange = "update": the optimizer's part before the exchange
  comm::ByteCounters hand_over_traffic_{};  // add_hand_over(), until take_hand_over()
  double hand_over_seconds_ = 0;
  compress::Rng straggler_rng_{
      compress::derive_seed(static_cast<std::uint64_t>(config_.seed),
                            compress::streams::kStraggler + static_cast<std::uint64_t>(comm_.rank()))};
  topology::ExchangeStats exchange_;
  bool decoded_payloads_recorded_ = false;
  std::vector<float> model_, anchor_;                       // flat parameters: scratch, and the last average
  std::unique_ptr<topology::BucketedExchange> overlapped_;  // allreduce { overlap = true }
  std::unique_ptr<GradientReadyHooks> hooks_;               // feeds overlapped_; goes first
  // Streaming DiLoCo: fragment f is layers [fragment_bounds_[f], fragment_bounds_[f + 1]), layer
  // l's elements start at layer_offsets_[l] of the flat model; each fragment has a compressor.
  std::vector<std::size_t> fragment_bounds_, layer_offsets_;
  std::unique_ptr<compress::CompressorGroup> fragment_compressors_;
  StepValue outer_lr_;               // diloco: the outer optimizer's lr, a constant or the file's function
  std::vector<InFlight> in_flight_;  // per fragment, under an overlap
  double time_overlap_budget_ = -1;  // this step landed an overlapped exchange: the compute it ran under
};

}  // namespace laconic::train
