#include "engine/train/worker.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/topology/bucketed_exchange.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/evaluate.hpp"
#include "engine/train/gradient_hooks.hpp"
#include "engine/train/model_hash.hpp"
#include "engine/train/objective.hpp"
#include "engine/train/populated_tensor.hpp"
#include "engine/train/shard.hpp"
#include "engine/train/sharded_evaluation.hpp"
#include "engine/train/step_helpers.hpp"

namespace laconic::train {

std::int64_t steps_per_epoch(const RunConfig& config, Dataset& dataset) {
  const std::int64_t per = dataset.train().size() / config.workers;
  const std::int64_t steps = (per + config.batch_size - 1) / config.batch_size;
  return config.max_steps > 0 ? std::min(steps, config.max_steps) : steps;
}

Stragglers Stragglers::from(const ComponentSpec& schedule) {
  Stragglers s;
  if (!schedule.fields.count("stragglers")) return s;  // a spec without the common fields
  s.count = schedule.integer("stragglers");
  s.delay = schedule.number("straggler_delay");
  s.jitter = schedule.number("straggler_jitter");
  if (s.count < 0) throw ConfigError(str_cat(schedule.name, ".stragglers must be >= 0, got ", s.count));
  if (!(s.delay >= 0)) throw ConfigError(str_cat(schedule.name, ".straggler_delay must be >= 0, got ", s.delay));
  if (!(s.jitter >= 0 && s.jitter <= 1))
    throw ConfigError(str_cat(schedule.name, ".straggler_jitter must be in [0, 1], got ", s.jitter));
  return s;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The worker's side of the schedule: one object per run, holding the replica and its gradient.
class Trainer : public schedule::StepActions {
 public:
  Trainer(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm)
      : config_(config),
        parts_(parts),
        comm_(comm),
        params_(parts.model->parameters()),
        exchange_updates_(config.exchange == "update") {
    flat_grad_ = attach_flat_gradient(params_);
    // The last averaged model (every worker's start): what local SGD's averages are taken from.
    read_model(anchor_);
    if (const auto bucketing = parts.topology->overlap()) start_overlap(*bucketing);
  }

  /// Tells the compressors of an overlapped exchange's buckets what the run's compressor hears.
  void set_epoch(std::int64_t epoch) {
    if (overlapped_)
      for (const auto& c : overlapped_->compressors()) c->set_epoch(epoch);
  }
  void set_step(const StepPoint& at) {
    if (overlapped_)
      for (const auto& c : overlapped_->compressors()) c->set_step(at);
  }

  void begin_epoch(std::int64_t epoch) {
    // The workers share the data; parameter servers (ranks after them) hold none.
    shard_ = shard_indices(parts_.dataset->train().size(), config_.workers, comm_.rank(), config_.seed, epoch);
    position_ = 0;
  }

  /// Continues the epoch at its step `index` (after begin_epoch(), when resuming).
  void skip_to(std::int64_t index) {
    position_ = std::min(shard_.size(), static_cast<std::size_t>(index * config_.batch_size));
  }

  /// The last average local SGD starts from and the stragglers' generator, for checkpoints.
  void save_state(StateWriter& out) const {
    out.array(anchor_);
    out.array(straggler_rng_.state_words());
    if (overlapped_)
      for (const auto& c : overlapped_->compressors()) c->save_state(out);
  }
  void load_state(StateReader& in) {
    in.array(anchor_);
    in.array_exact(straggler_rng_.state_words());
    if (overlapped_)
      for (const auto& c : overlapped_->compressors()) c->load_state(in);
  }

  std::int64_t steps_per_epoch() const { return train::steps_per_epoch(config_, *parts_.dataset); }

  void compute_gradients() override {
    const auto& data = parts_.dataset->train();
    auto end = std::min<std::size_t>(position_ + static_cast<std::size_t>(config_.batch_size), shard_.size());
    auto index =
        torch::from_blob(shard_.data() + position_, {static_cast<std::int64_t>(end - position_)}, torch::kInt64);
    position_ = end;
    auto inputs = data.inputs.index_select(0, index);
    auto labels = data.labels.index_select(0, index);
    flat_grad_.zero_();
    exchange_ = {};  // a step without an exchange sends nothing
    time_delay_ = 0;
    time_update_ = 0;
    auto t0 = Clock::now();
    auto loss = training_loss(parts_.model->forward(inputs), labels);
    auto t1 = Clock::now();
    if (overlapped_) {
      // The straggler's delay holds its gradient back, so it goes before backward: after it,
      // the buckets would already be on their way.
      straggle();
      overlapped_->begin();
      t1 = Clock::now();
    }
    loss.backward();
    auto t2 = Clock::now();
    if (overlapped_) overlapped_->backward_done();
    time_forward_ = seconds_between(t0, t1) - time_delay_;
    time_backward_ = seconds_between(t1, t2);
    if (!overlapped_) straggle();
    loss_ = loss.item<double>();
    LACONIC_ENFORCE(params_.front().grad().data_ptr() == flat_grad_.data_ptr(),
                    "backward replaced the gradient buffer instead of writing into it");
  }

  void exchange_gradients() override {
    if (overlapped_) {
      exchange_ = overlapped_->finish(parts_.network.get());
      return;
    }
    if (exchange_updates_) {
      // exchange = "update": the optimizer's step on this worker's gradient goes out instead
      // (its momentum and learning rate applied here; the compressor's error feedback then
      // acts on the update).
      const auto t0 = Clock::now();
      parts_.optimizer->compute_update(params_);
      time_update_ = seconds_between(t0, Clock::now());
    }
    std::span<float> gradient(flat_grad_.data_ptr<float>(), static_cast<std::size_t>(flat_grad_.numel()));
    exchange_ = parts_.topology->average(gradient, *parts_.compressor, comm_);
  }

  bool topology_mixes_models() const override { return parts_.topology->mixes_models(); }

  void average_models() override {
    read_model(model_);
    if (parts_.topology->mixes_models()) {
      exchange_ = parts_.topology->average(model_, *parts_.compressor, comm_);
    } else {
      // Average the change since the last average, so that a compressor (with its error
      // feedback) sees something gradient-like, then start the next period from the mean.
      for (std::size_t i = 0; i < model_.size(); ++i) model_[i] -= anchor_[i];
      exchange_ = parts_.topology->average(model_, *parts_.compressor, comm_);
      for (std::size_t i = 0; i < model_.size(); ++i) model_[i] += anchor_[i];
      anchor_ = model_;
    }
    write_model(model_);
  }

  void apply_update() override {
    auto t0 = Clock::now();
    if (parts_.topology->pulls_weights()) {
      // The server stepped its optimizer; what came back is the change of its weights.
      torch::NoGradGuard no_grad;
      std::int64_t offset = 0;
      for (auto& p : params_) {
        p.add_(flat_grad_.narrow(0, offset, p.numel()).view_as(p));
        offset += p.numel();
      }
      time_optimizer_ = seconds_between(t0, Clock::now());
      return;
    }
    if (exchange_updates_) {
      // The workers' mean update, applied as it is: the optimizer acted before the exchange.
      torch::NoGradGuard no_grad;
      for (auto& p : params_) p.sub_(p.grad());
      time_optimizer_ = time_update_ + seconds_between(t0, Clock::now());
      return;
    }
    parts_.optimizer->step(params_);
    time_optimizer_ = seconds_between(t0, Clock::now());
  }

  /// Per-step measurements, in the order of docs/schema.md.
  void record_step(MetricsSink& sink, std::int64_t step, std::int64_t epoch, double wall, double step_time) const {
    const PutMetric put = [&](const char* key, double value) {
      sink.record({key, step, epoch, comm_.rank(), wall, value});
    };
    put(keys::kTrainLoss, loss_);
    put(keys::kTimeForward, time_forward_);
    put(keys::kTimeBackward, time_backward_);
    // Projected, never measured: this step's messages on the experiment's link, in place of
    // the measured time inside collectives.
    const double projected = record_exchange(put, exchange_, parts_.network.get());
    if (exchange_.measured_wait) put(keys::kTimeWait, exchange_.time_wait);
    if (exchange_.overlapped) put(keys::kTimeOverlapped, exchange_.time_overlapped);
    put(keys::kTimeOptimizer, time_optimizer_);
    put(keys::kLr, parts_.optimizer->lr());
    if (parts_.stragglers.delay > 0) put(keys::kTimeDelay, time_delay_);
    put(keys::kTimeStep, step_time);
    put(keys::kPayloadBytes, static_cast<double>(exchange_.payload_bytes));
    // What projecting onto another link later needs (laconic report --link).
    put(keys::kMessages, static_cast<double>(exchange_.traffic.messages));
    put(keys::kLinkBytes, static_cast<double>(exchange_.traffic.link_bytes));
    if (parts_.network) put(keys::kProjectedTimeStep, step_time - exchange_.time_communicate + projected);
  }

  double loss() const { return loss_; }

  /// sqrt(mean over workers of ||x_i - mean x||^2): how far gossip's replicas are apart. Its two
  /// allreduces are bookkeeping, outside every step's counters.
  double consensus_distance() {
    read_model(model_);
    std::vector<float> mean = model_;
    comm_.allreduce_sum(mean);
    double squared = 0;
    for (std::size_t i = 0; i < model_.size(); ++i) {
      const double d = model_[i] - mean[i] / comm_.size();
      squared += d * d;
    }
    std::vector<float> total = {static_cast<float>(squared)};
    comm_.allreduce_sum(total);
    return std::sqrt(static_cast<double>(total[0]) / comm_.size());
  }

  /// The parameters, flattened in order.
  void read_model(std::vector<float>& out) const {
    out.resize(static_cast<std::size_t>(flat_grad_.numel()));
    std::size_t offset = 0;
    for (const auto& p : params_) {
      auto c = p.detach().contiguous();
      std::memcpy(out.data() + offset, c.data_ptr<float>(), static_cast<std::size_t>(c.numel()) * sizeof(float));
      offset += static_cast<std::size_t>(c.numel());
    }
  }

  void write_model(const std::vector<float>& in) {
    torch::NoGradGuard no_grad;
    std::size_t offset = 0;
    for (auto& p : params_) {
      auto source = torch::from_blob(const_cast<float*>(in.data() + offset), p.sizes(), torch::kFloat);
      p.copy_(source);
      offset += static_cast<std::size_t>(p.numel());
    }
  }
  std::vector<torch::Tensor>& params() { return params_; }

 private:
  /// Sleeps the straggler's delay when this worker is one.
  void straggle() {
    if (parts_.stragglers.delay > 0 && parts_.stragglers.slows(comm_.rank(), config_.workers)) {
      const double spread = parts_.stragglers.jitter * (2.0 * straggler_rng_.uniform() - 1.0);
      time_delay_ = parts_.stragglers.delay * (1.0 + spread);
      std::this_thread::sleep_for(std::chrono::duration<double>(time_delay_));
    }
  }

  /// Exchanges the gradient bucket by bucket while backward runs: a compressor of the run's
  /// kind per bucket (seeded per bucket, the same on every worker), and a hook per parameter
  /// that reports its gradient complete.
  void start_overlap(const topology::Bucketing& bucketing) {
    std::vector<compress::LayerShape> shapes;
    std::vector<std::size_t> sizes;
    for (const auto& p : params_) {
      shapes.emplace_back(p.sizes().begin(), p.sizes().end());
      sizes.push_back(static_cast<std::size_t>(p.numel()));
    }
    const auto seed = static_cast<std::uint64_t>(config_.seed);
    const int rank = comm_.rank();
    auto make = [&](std::size_t first, std::size_t end, std::size_t bucket) {
      auto c = parts_.compressor_for_layers(
          {shapes.begin() + static_cast<std::ptrdiff_t>(first), shapes.begin() + static_cast<std::ptrdiff_t>(end)});
      c->set_seed(compress::derive_seed(seed, compress::streams::kBucket + bucket), rank);
      return c;
    };
    overlapped_ = std::make_unique<topology::BucketedExchange>(
        std::span<float>(flat_grad_.data_ptr<float>(), static_cast<std::size_t>(flat_grad_.numel())), sizes, bucketing,
        make, comm_, bucketing.algorithm);
    hooks_ = std::make_unique<GradientReadyHooks>(
        params_, [exchange = overlapped_.get()](std::size_t i) { exchange->layer_ready(i); });
  }

  const RunConfig& config_;
  WorkerParts& parts_;
  comm::Communicator& comm_;
  std::vector<torch::Tensor> params_;
  torch::Tensor flat_grad_;
  std::vector<std::int64_t> shard_;
  std::size_t position_ = 0;
  const bool exchange_updates_;  // exchange = "update"
  double loss_ = 0, time_forward_ = 0, time_backward_ = 0, time_optimizer_ = 0, time_delay_ = 0;
  double time_update_ = 0;  // exchange = "update": the optimizer's part before the exchange
  compress::Rng straggler_rng_{
      compress::derive_seed(static_cast<std::uint64_t>(config_.seed),
                            compress::streams::kStraggler + static_cast<std::uint64_t>(comm_.rank()))};
  topology::ExchangeStats exchange_;
  std::vector<float> model_, anchor_;                       // flat parameters: scratch, and the last average
  std::unique_ptr<topology::BucketedExchange> overlapped_;  // allreduce { overlap = true }
  std::unique_ptr<GradientReadyHooks> hooks_;               // feeds overlapped_; goes first
};

}  // namespace

// Replicas must start equal; a mismatch would silently turn the run into something else.
void check_identical_start(Model& model, comm::Communicator& comm) {
  std::uint64_t mine = model_hash(model, HashedState::Parameters);
  auto all = comm.allgatherv({reinterpret_cast<const std::uint8_t*>(&mine), sizeof mine});
  for (std::size_t r = 0; r < all.size(); ++r) {
    std::uint64_t theirs = 0;
    LACONIC_ENFORCE(all[r].size() == sizeof theirs, "expected 8 hash bytes, got ", all[r].size());
    std::memcpy(&theirs, all[r].data(), sizeof theirs);
    LACONIC_ENFORCE(theirs == mine, "rank ", r, " starts from weights with hash ", theirs, ", rank ", comm.rank(),
                    " from ", mine);
  }
}

namespace {

/// Everything a worker's loop needs to continue, in the order load_checkpoint() reads it.
void save_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                     const TrainingPosition& position, WorkerParts& parts, const Trainer& trainer) {
  write_checkpoint(path, fingerprint, rank, position, [&](StateWriter& out) {
    save_model(out, *parts.model);
    parts.optimizer->save_state(out);
    parts.compressor->save_state(out);
    parts.schedule->save_state(out);
    parts.topology->save_state(out);
    out.flag(parts.stop_rule != nullptr);
    if (parts.stop_rule) parts.stop_rule->save_state(out);
    trainer.save_state(out);
    save_torch_generator(out);
  });
}

TrainingPosition load_checkpoint(const std::string& path, const std::string& fingerprint, int rank, WorkerParts& parts,
                                 Trainer& trainer) {
  return read_checkpoint(path, fingerprint, rank, [&](StateReader& in, const TrainingPosition& position) {
    load_model(in, *parts.model);
    parts.optimizer->load_state(in);
    // A restored compressor is told its epoch first, as a fresh one would be.
    parts.compressor->set_epoch(position.epoch);
    parts.compressor->load_state(in);
    parts.schedule->load_state(in);
    parts.topology->load_state(in);
    if (in.flag() != (parts.stop_rule != nullptr))
      throw ConfigError(str_cat("checkpoint ", path, " disagrees with the run about its stopping rule"));
    if (parts.stop_rule) parts.stop_rule->load_state(in);
    trainer.set_epoch(position.epoch);
    trainer.load_state(in);
    load_torch_generator(in);
  });
}

}  // namespace

WorkerResult run_worker(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
                        const ProgressFn& progress, RunCallbacks* callbacks, const Checkpointing& checkpointing) {
  const bool lua_epoch_end = callbacks != nullptr && callbacks->has("on_epoch_end");
  // Under a synchronous schedule every worker reaches each evaluation together, so all take
  // part (and split it when their replicas agree); otherwise worker 0 evaluates alone.
  const bool shared_evaluation = parts.schedule->traits().exchanges_each_gradient;
  populate_pages(parts.dataset->train().inputs);
  if (comm.rank() == 0 || shared_evaluation) populate_pages(parts.dataset->test().inputs);
  check_identical_start(*parts.model, comm);
  parts.compressor->set_seed(static_cast<std::uint64_t>(config.seed), comm.rank());

  Trainer trainer(config, parts, comm);
  const std::string fingerprint = config_fingerprint(config);
  TrainingPosition resumed;  // a fresh run starts before step 0
  const bool resuming = checkpointing.resume_step >= 0;
  if (resuming) {
    const std::string path = checkpoint_path(checkpointing.dir, comm.rank(), checkpointing.resume_step);
    resumed = load_checkpoint(path, fingerprint, comm.rank(), parts, trainer);
    LACONIC_ENFORCE(resumed.step == checkpointing.resume_step, "checkpoint ", path, " is of step ", resumed.step);
  }
  const auto start =
      Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(resumed.wall));
  auto wall = [&] { return seconds_between(start, Clock::now()); };
  if (!resuming && comm.rank() == 0) {
    std::int64_t parameters = 0;
    for (const auto& p : trainer.params()) parameters += p.numel();
    sink.record({keys::kModelParameters, 0, 0, 0, 0.0, static_cast<double>(parameters)});
  }

  if (parts.liveness) parts.liveness->enter("training");
  WorkerResult result;
  std::int64_t step = resumed.step;
  double first_loss = resumed.first_loss;
  const std::int64_t steps_per_epoch = trainer.steps_per_epoch();
  for (std::int64_t epoch = resumed.epoch; epoch < config.epochs; ++epoch) {
    const bool resumed_epoch = resuming && epoch == resumed.epoch;
    const auto epoch_start = Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                                resumed_epoch ? resumed.epoch_elapsed : 0.0));
    auto last_progress = epoch_start;
    double loss_sum = resumed_epoch ? resumed.epoch_loss_sum : 0;
    trainer.begin_epoch(epoch);
    if (resumed_epoch) trainer.skip_to(resumed.index);
    parts.compressor->set_epoch(epoch);
    trainer.set_epoch(epoch);
    parts.model->train();
    for (std::int64_t i = resumed_epoch ? resumed.index : 0; i < steps_per_epoch; ++i, ++step) {
      if (checkpointing.saves() && step % checkpointing.every == 0 && step > resumed.step) {
        // Outside the step's timers. Metrics go first, so the controller has every step before
        // this one when it hears of the checkpoint.
        sink.flush();
        const TrainingPosition here{
            step, epoch, i, loss_sum, first_loss, wall(), seconds_between(epoch_start, Clock::now())};
        if (parts.liveness) parts.liveness->enter("checkpointing");
        save_checkpoint(checkpoint_path(checkpointing.dir, comm.rank(), step), fingerprint, comm.rank(), here, parts,
                        trainer);
        if (parts.liveness) parts.liveness->enter("training");
        if (checkpointing.on_saved) checkpointing.on_saved(step);
      }
      set_learning_rate(parts, callbacks, config, step, epoch, steps_per_epoch);
      const StepPoint at{epoch, step, callbacks};
      parts.compressor->set_step(at);
      trainer.set_step(at);
      parts.topology->set_step(at);
      const auto step_start = Clock::now();
      parts.schedule->step(trainer, at);
      const auto step_end = Clock::now();
      if (parts.liveness) parts.liveness->tick();
      loss_sum += trainer.loss();
      trainer.record_step(sink, step, epoch, wall(), seconds_between(step_start, step_end));
      const double loss = trainer.loss();
      if (std::isnan(first_loss)) first_loss = loss;
      const bool exploded =
          config.divergence_factor > 0 && first_loss > 0 && loss > config.divergence_factor * first_loss;
      if (!std::isfinite(loss) || exploded) {
        sink.flush();  // the loss that diverged is kept
        throw DivergedError(str_cat("training loss ", loss, " at epoch ", epoch, ", step ", step, " on worker ",
                                    comm.rank(),
                                    exploded ? str_cat(": above divergence_factor ", config.divergence_factor,
                                                       " x the first step's loss ", first_loss)
                                             : std::string()));
      }
      // eval_every: the test split is evaluated between steps too (the epoch's end has its own).
      const bool evaluate_now = config.eval_every > 0 && (comm.rank() == 0 || shared_evaluation) &&
                                (step + 1) % config.eval_every == 0 && i + 1 < steps_per_epoch;
      // Progress goes out before an evaluation, so that the controller's line for it is current.
      if (progress && comm.rank() == 0 &&
          (seconds_between(last_progress, step_end) >= 0.5 || i + 1 == steps_per_epoch || evaluate_now)) {
        last_progress = step_end;
        double rate = static_cast<double>(i + 1) / seconds_between(epoch_start, step_end);
        progress({epoch, i + 1, steps_per_epoch, trainer.loss(), rate});
      }
      if (evaluate_now)
        evaluate_and_record(*parts.model, *parts.dataset, config, sink, comm, shared_evaluation, step, epoch, wall(),
                            parts.liveness);
    }
    result.steps = step;
    const std::int64_t last = step - 1;
    sink.record(
        {keys::kEpochTrainLoss, last, epoch, comm.rank(), wall(), loss_sum / static_cast<double>(steps_per_epoch)});
    sink.record({keys::kEpochTime, last, epoch, comm.rank(), wall(), seconds_between(epoch_start, Clock::now())});
    EpochMetrics metrics{epoch, {{keys::kEpochTrainLoss, loss_sum / static_cast<double>(steps_per_epoch)}}};
    if (parts.topology->mixes_models()) {
      const double distance = trainer.consensus_distance();
      metrics.values[keys::kConsensusDistance] = distance;
      if (comm.rank() == 0) sink.record({keys::kConsensusDistance, last, epoch, 0, wall(), distance});
    }
    Evaluation e;
    if (comm.rank() == 0 || shared_evaluation)
      e = evaluate_and_record(*parts.model, *parts.dataset, config, sink, comm, shared_evaluation, last, epoch, wall(),
                              parts.liveness);
    if (comm.rank() == 0) {
      result.final_test_accuracy = e.accuracy;
      metrics.values[keys::kTestAccuracy] = e.accuracy;
      metrics.values[keys::kTestLoss] = e.loss;
      if (e.perplexity) metrics.values[keys::kTestPerplexity] = *e.perplexity;
    }
    // Every worker knows whether a rule or a function decides (same config, same file).
    const bool decided = (parts.stop_rule && parts.stop_rule->can_stop()) || lua_epoch_end;
    const bool stop =
        decided && epoch + 1 < config.epochs &&
        decide_stop(parts.stop_rule.get(), lua_epoch_end ? callbacks : nullptr, metrics, comm, config.workers);
    if (stop && comm.rank() == 0)
      sink.record({keys::kStoppedEarly, last, epoch, 0, wall(), static_cast<double>(epoch)});
    sink.flush();
    if (stop) break;
  }
  if (parts.liveness) parts.liveness->enter("finishing");
  parts.topology->finish(comm);
  result.parameter_hash = model_hash(*parts.model, HashedState::Parameters);
  return result;
}

}  // namespace laconic::train
