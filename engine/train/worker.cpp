#include "engine/train/worker.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/topology/bucketed_exchange.hpp"
#include "engine/train/averaged_state.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/data/populated_tensor.hpp"
#include "engine/train/data/shard.hpp"
#include "engine/train/elastic_steps.hpp"
#include "engine/train/evaluate.hpp"
#include "engine/train/gradient_hooks.hpp"
#include "engine/train/models/model_hash.hpp"
#include "engine/train/models/objective.hpp"
#include "engine/train/sharded_evaluation.hpp"
#include "engine/train/step_helpers.hpp"
#include "engine/train/trainer.hpp"
#include "engine/train/worker_checkpoint.hpp"

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

}  // namespace

// Replicas must start equal; a mismatch would silently turn the run into something else.
void check_identical_start(Model& model, comm::Communicator& comm) {
  std::uint64_t mine = model_hash(model, HashedState::Parameters);
  auto all = comm.allgatherv({reinterpret_cast<const std::uint8_t*>(&mine), sizeof mine});
  for (std::size_t i = 0; i < all.size(); ++i) {  // the i-th rank present (all ranks without churn)
    std::uint64_t theirs = 0;
    LACONIC_ENFORCE(all[i].size() == sizeof theirs, "expected 8 hash bytes, got ", all[i].size());
    std::memcpy(&theirs, all[i].data(), sizeof theirs);
    LACONIC_ENFORCE(theirs == mine, "rank ", comm.members().empty() ? static_cast<int>(i) : comm.members()[i],
                    " starts from weights with hash ", theirs, ", rank ", comm.rank(), " from ", mine);
  }
}

namespace {

Clock::duration as_duration(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One worker's run, epoch by epoch and step by step: the schedule's step, its measurements, the
// divergence check, checkpoints, progress, evaluations and the vote on stopping early.
class WorkerLoop {
 public:
  WorkerLoop(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm, MetricsSink& sink,
             const ProgressFn& progress, RunCallbacks* callbacks, const Checkpointing& checkpointing)
      : config_(config),
        parts_(parts),
        comm_(comm),
        sink_(sink),
        progress_(progress),
        callbacks_(callbacks),
        checkpointing_(checkpointing),
        liveness_(*parts.liveness),
        // Under a synchronous schedule every worker reaches each evaluation together, so all take
        // part (and split it when their replicas agree); otherwise worker 0 evaluates alone.
        // A worker that may be lost any time (elastic) takes no part in an evaluation.
        shared_evaluation_(parts.schedule->traits().exchanges_each_gradient && !churns(parts) && !comm.elastic()),
        trainer_(config, parts, comm),
        fingerprint_(config_fingerprint(config)) {
    if (comm.elastic() != nullptr) elastic_.emplace(*comm.elastic(), parts, trainer_, comm, sink);
  }

  WorkerResult run() {
    keep_start_state();
    resume();
    if (elastic_ && !rejoined_) elastic_->start(step_, resumed_.epoch, wall(), first_loss_);
    if (resumed_churn_ && churns(parts_))
      join_members(std::vector<int>(resumed_churn_->members.begin(), resumed_churn_->members.end()));
    else if (churns(parts_))
      join_members(parts_.churn->present(step_ - 1, config_.workers));
    liveness_.enter("training");
    WorkerResult result;
    std::int64_t last_epoch = resumed_.epoch;
    for (std::int64_t epoch = resumed_.epoch; epoch < config_.epochs; ++epoch) {
      last_epoch = epoch;
      run_epoch(epoch);
      result.steps = step_;
      if (end_epoch(epoch)) break;
    }
    liveness_.enter("finishing");
    if (elastic_) elastic_->finish(step_, last_epoch, wall(), first_loss_);
    parts_.topology->finish(comm_);
    result.final_test_accuracy = final_test_accuracy_;
    result.parameter_hash = model_hash(*parts_.model, HashedState::Parameters);
    return result;
  }

 private:
  bool evaluates() const { return comm_.rank() == 0 || shared_evaluation_; }
  // Seconds since the run started: the wall clock, or for a thread rank the sum of its derived
  // steps and its evaluations' CPU time (what the run would take with a core per rank).
  double wall() const { return derived_clock_ ? derived_seconds_ : seconds_between(start_, Clock::now()); }
  double epoch_elapsed() const {
    return derived_clock_ ? derived_seconds_ - epoch_derived_start_ : seconds_between(epoch_start_, Clock::now());
  }
  bool resuming() const { return checkpointing_.resume_step >= 0 || rejoined_; }

  // Continues from the checkpoint the run resumes from, or records the model's size.
  void resume() {
    if (elastic_ && comm_.elastic()->membership().relaunched()) {
      rejoin();
    } else if (resuming()) {
      const std::string path = checkpoint_path(checkpointing_.dir, comm_.rank(), checkpointing_.resume_step);
      if (keeps_position()) resumed_churn_.emplace();
      resumed_ = load_worker_checkpoint(path, fingerprint_, comm_.rank(), parts_, trainer_,
                                        resumed_churn_ ? &*resumed_churn_ : nullptr);
      LACONIC_ENFORCE(resumed_.step == checkpointing_.resume_step, "checkpoint ", path, " is of step ", resumed_.step);
    } else if (comm_.rank() == 0) {
      std::int64_t parameters = 0;
      for (const auto& p : trainer_.params()) parameters += p.numel();
      sink_.record({keys::kModelParameters, 0, 0, 0, 0.0, static_cast<double>(parameters)});
    }
    start_ = Clock::now() - as_duration(resumed_.wall);
    step_ = resumed_.step;
    first_loss_ = resumed_.first_loss;
  }

  // A relaunched worker of an elastic run: the state of the worker it takes it from, and its
  // generation's step, where its epoch's place follows from.
  void rejoin() {
    const ElasticStart start = elastic_->join();
    rejoined_ = true;
    resumed_.step = start.step;
    resumed_.epoch = start.step / steps_per_epoch_;
    resumed_.index = start.step % steps_per_epoch_;
    resumed_.first_loss = start.first_loss;
    resumed_.wall = start.wall;
  }

  void run_epoch(std::int64_t epoch) {
    const bool resumed_epoch = resuming() && epoch == resumed_.epoch;
    epoch_start_ = Clock::now() - as_duration(resumed_epoch ? resumed_.epoch_elapsed : 0.0);
    last_progress_ = epoch_start_;
    epoch_derived_start_ = derived_seconds_;
    loss_sum_ = resumed_epoch ? resumed_.epoch_loss_sum : 0;
    trainer_.begin_epoch(epoch);
    if (resumed_epoch) trainer_.skip_to(resumed_.index);
    if (resumed_epoch && resumed_churn_) trainer_.set_data_position(resumed_churn_->data_position);
    epoch_steps_trained_ = resumed_epoch && resumed_churn_ ? resumed_churn_->epoch_steps_trained : 0;
    parts_.model->train();
    for (std::int64_t i = resumed_epoch ? resumed_.index : 0; i < steps_per_epoch_; ++i, ++step_) {
      if (checkpoint_due()) save(epoch, i);
      const auto step_end = run_step(epoch, i);
      check_divergence(epoch);
      // eval_every: the test split is evaluated between steps too (the epoch's end has its own).
      const bool evaluate_now =
          config_.eval_every > 0 && evaluates() && (step_ + 1) % config_.eval_every == 0 && i + 1 < steps_per_epoch_;
      // Progress goes out before an evaluation, so that the controller's line for it is current.
      if (seconds_between(last_progress_, step_end) >= 0.5 || i + 1 == steps_per_epoch_ || evaluate_now)
        report_progress(epoch, i, step_end);
      if (evaluate_now) evaluate(step_, epoch);
    }
  }

  // The schedule's step at the current one (the epoch's `index`-th), timed and recorded; returns when it ended.
  Clock::time_point run_step(std::int64_t epoch, std::int64_t index) {
    if (churns(parts_) && !take_part(epoch)) return Clock::now();  // absent: trains and records nothing
    if (churns(parts_) && config_.churn_batch == ChurnBatch::Global) trainer_.share_step(members_, index);
    if (elastic_) elastic_->begin_step(step_, epoch, wall(), first_loss_);  // before the step changes anything
    set_learning_rate(parts_, callbacks_, config_, step_, epoch, steps_per_epoch_);
    const StepPoint at{epoch, step_, callbacks_};
    trainer_.compressor().advance(at);
    parts_.topology->set_step(at);
    const double step_start = rank_seconds();               // the step's time is on the rank's clock
    if (parts_.network) parts_.network->set_clock(wall());  // where a link's trace stands
    begin_phase(derived_seconds_);
    try {
      parts_.schedule->step(trainer_, at);
    } catch (const CommError&) {
      if (!elastic_) throw;
      // A peer was lost: the step again (this worker had completed as many as any), or on to the next.
      if (elastic_->recover(step_, epoch, wall(), first_loss_, rank_seconds() - step_start))
        return run_step(epoch, index);
      return Clock::now();
    }
    const double hand_over = trainer_.take_hand_over();  // a joiner's state, counted in this step
    const double seconds = trainer_.step_seconds(rank_seconds() - step_start + hand_over);
    const auto step_end = Clock::now();
    liveness_.tick();
    loss_sum_ += trainer_.loss();
    ++epoch_steps_trained_;
    if (derived_clock_) derived_seconds_ += seconds;
    trainer_.record_step(sink_, step_, epoch, wall(), seconds);
    if (elastic_) sink_.flush();  // a worker may be killed any time: its steps' rows are out as each ends
    return step_end;
  }

  static bool churns(const WorkerParts& parts) { return parts.churn && parts.churn->name() != "calm"; }
  // Whether a checkpoint keeps the workers present, the place in the shard and the epoch's steps
  // trained (ChurnPosition): with churn, and in an elastic run, whose workers may have been away.
  bool keeps_position() const { return churns(parts_) || elastic_.has_value(); }

  // Churn: whether this worker takes part in the step; the workers present change first, and one
  // that comes back takes worker 0's weights and optimizer state (worker 0 never leaves).
  bool take_part(std::int64_t epoch) {
    std::vector<int> now = parts_.churn->present(step_, config_.workers);
    // A schedule of rounds may keep those coming back waiting for the next round's start.
    if (!parts_.schedule->admits_joiners()) now = staying(now);
    const bool here = std::binary_search(now.begin(), now.end(), comm_.rank());
    if (!here) parts_.schedule->pass(StepPoint{epoch, step_, callbacks_});
    if (now == members_) return here;
    std::vector<int> joiners, leavers;
    std::set_difference(now.begin(), now.end(), members_.begin(), members_.end(), std::back_inserter(joiners));
    std::set_difference(members_.begin(), members_.end(), now.begin(), now.end(), std::back_inserter(leavers));
    const auto start = Clock::now();  // the hand-over's own time, on any rank clock
    const comm::ByteCounters before = comm_.counters();
    const double on_rank_clock = rank_seconds();
    const std::vector<std::uint8_t> averaged = averaged_state(joiners, now);
    join_members(now);
    hand_over(joiners, averaged, epoch);
    trainer_.add_hand_over(comm_.counters().since(before), rank_seconds() - on_rank_clock);
    // Those present hold the same weights again (mid-round, under join = "now", they never
    // did), or the run ends here saying whose differ.
    if (here && !joiners.empty() && parts_.schedule->round_starts()) check_identical_start(*parts_.model, comm_);
    if (comm_.rank() == 0) record_change(joiners, leavers, now.size(), seconds_between(start, Clock::now()), epoch);
    return here;
  }

  // Worker 0's rows for a change: who joined (+1) and who left (-1), the count present, and the
  // seconds the hand-over took (the joiners' state sent and the replicas checked equal).
  void record_change(const std::vector<int>& joiners, const std::vector<int>& leavers, std::size_t present,
                     double seconds, std::int64_t epoch) {
    for (int r : joiners) sink_.record({keys::kMemberChange, step_, epoch, r, wall(), 1.0});
    for (int r : leavers) sink_.record({keys::kMemberChange, step_, epoch, r, wall(), -1.0});
    sink_.record({keys::kMembers, step_, epoch, 0, wall(), static_cast<double>(present)});
    if (!joiners.empty()) sink_.record({keys::kJoinSeconds, step_, epoch, 0, wall(), seconds});
  }

  // Of `present`, those present before this step: the workers coming back are kept waiting.
  std::vector<int> staying(const std::vector<int>& present) const {
    std::vector<int> out;
    std::set_intersection(present.begin(), present.end(), members_.begin(), members_.end(), std::back_inserter(out));
    return out;
  }

  // The workers present from now on: the collectives run around them (a rank absent takes part in none).
  void join_members(const std::vector<int>& present) {
    members_ = present;
    if (std::binary_search(present.begin(), present.end(), comm_.rank())) comm_.set_members(present);
  }

  // The mean of the optimizer states of the workers that stay, when a joiner takes it (join state
  // "averaged"): each of them takes part in the allreduce; worker 0 gets the state to send,
  // keeping its own.
  std::vector<std::uint8_t> averaged_state(const std::vector<int>& joiners, const std::vector<int>& now) {
    if (std::none_of(joiners.begin(), joiners.end(), [&](int j) { return join_state(j) == JoinState::Averaged; }))
      return {};
    const std::vector<int> stay = staying(now);
    if (!std::binary_search(stay.begin(), stay.end(), comm_.rank())) return {};
    return averaged_optimizer_state(*parts_.optimizer, comm_, stay);
  }

  // Worker 0 sends each joiner its weights, the optimizer state its join takes (worker 0's, the
  // staying workers' mean in `averaged`, or none for a fresh one), the schedule's state and,
  // under a schedule of rounds, the last average and the outer optimizers' state, the size
  // first; the bytes it sent are recorded as join_bytes.
  void hand_over(const std::vector<int>& joiners, const std::vector<std::uint8_t>& averaged, std::int64_t epoch) {
    const bool joining = std::binary_search(joiners.begin(), joiners.end(), comm_.rank());
    if (joiners.empty() || (comm_.rank() != 0 && !joining)) return;  // only leaving: nothing to hand over
    if (joining) {
      const std::vector<std::uint8_t> bytes = comm_.receive_sized(0);
      StateReader in(bytes);
      load_model(in, *parts_.model);
      if (join_state(comm_.rank()) == JoinState::Fresh) {
        StateReader start(start_state_);
        parts_.optimizer->load_state(start);
        parts_.compressor->load_state(start);  // told its epoch by the next advance()
      } else {
        parts_.optimizer->load_state(in);
      }
      parts_.schedule->load_state(in);
      trainer_.load_shared_state(in);
      return;
    }
    double sent = 0;
    for (const JoinState state : {JoinState::Copied, JoinState::Fresh, JoinState::Averaged}) {
      if (std::none_of(joiners.begin(), joiners.end(), [&](int j) { return join_state(j) == state; })) continue;
      std::vector<std::uint8_t> bytes;
      StateWriter out(bytes);
      save_model(out, *parts_.model);
      if (state == JoinState::Copied) parts_.optimizer->save_state(out);
      if (state == JoinState::Averaged) bytes.insert(bytes.end(), averaged.begin(), averaged.end());
      parts_.schedule->save_state(out);
      trainer_.save_shared_state(out);
      for (int j : joiners)
        if (join_state(j) == state) sent += static_cast<double>(comm_.send_sized(j, bytes));
    }
    sink_.record({keys::kJoinBytes, step_, epoch, 0, wall(), sent});
  }

  // The state `rank`, joining now, takes.
  JoinState join_state(int rank) const { return parts_.churn->join_state(step_, rank, config_.workers); }

  // The optimizer's and compressor's state of the run's start, for joiners that take fresh state.
  void keep_start_state() {
    if (!churns(parts_) || !parts_.churn->any_join(JoinState::Fresh, config_.workers)) return;
    StateWriter out(start_state_);
    parts_.optimizer->save_state(out);
    parts_.compressor->save_state(out);
  }

  // A NaN or infinite loss, or one above divergence_factor x the first step's, ends the run.
  void check_divergence(std::int64_t epoch) {
    const double loss = trainer_.loss();
    if (std::isnan(first_loss_)) first_loss_ = loss;
    const bool exploded =
        config_.divergence_factor > 0 && first_loss_ > 0 && loss > config_.divergence_factor * first_loss_;
    if (std::isfinite(loss) && !exploded) return;
    sink_.flush();  // the loss that diverged is kept
    throw DivergedError(str_cat(
        "training loss ", loss, " at epoch ", epoch, ", step ", step_, " on worker ", comm_.rank(),
        exploded
            ? str_cat(": above divergence_factor ", config_.divergence_factor, " x the first step's loss ", first_loss_)
            : std::string()));
  }

  bool checkpoint_due() const {
    return checkpointing_.saves() && step_ % checkpointing_.every == 0 && step_ > resumed_.step;
  }

  // Outside the step's timers. Metrics go first, so the controller has every step before this
  // one when it hears of the checkpoint.
  void save(std::int64_t epoch, std::int64_t index) {
    sink_.flush();
    const TrainingPosition here{step_, epoch, index, loss_sum_, first_loss_, wall(), epoch_elapsed()};
    liveness_.enter("checkpointing");
    ChurnPosition churn{std::vector<std::int64_t>(members_.begin(), members_.end()), trainer_.data_position(),
                        epoch_steps_trained_};
    save_worker_checkpoint(checkpoint_path(checkpointing_.dir, comm_.rank(), step_), fingerprint_, comm_.rank(), here,
                           parts_, trainer_, keeps_position() ? &churn : nullptr);
    liveness_.enter("training");
    if (checkpointing_.on_saved) checkpointing_.on_saved(step_);
  }

  void report_progress(std::int64_t epoch, std::int64_t index, Clock::time_point step_end) {
    if (!progress_ || comm_.rank() != 0) return;
    last_progress_ = step_end;
    const double rate = static_cast<double>(index + 1) / seconds_between(epoch_start_, step_end);
    progress_({epoch, index + 1, steps_per_epoch_, trainer_.loss(), rate});
  }

  // Records the epoch's training loss and time, evaluates, and asks whether to stop (true).
  bool end_epoch(std::int64_t epoch) {
    const std::int64_t last = step_ - 1;
    // With churn, the mean over the steps this worker trained; none trained, no row.
    const std::int64_t trained = keeps_position() ? epoch_steps_trained_ : steps_per_epoch_;
    const double mean_loss =
        trained > 0 ? loss_sum_ / static_cast<double>(trained) : std::numeric_limits<double>::quiet_NaN();
    if (trained > 0) sink_.record({keys::kEpochTrainLoss, last, epoch, comm_.rank(), wall(), mean_loss});
    sink_.record({keys::kEpochTime, last, epoch, comm_.rank(), wall(), epoch_elapsed()});
    EpochMetrics metrics{epoch, {{keys::kEpochTrainLoss, mean_loss}}};
    if (parts_.topology->mixes_models()) {
      const double distance = on_derived_clock([&] { return trainer_.consensus_distance(); });
      metrics.values[keys::kConsensusDistance] = distance;
      if (comm_.rank() == 0) sink_.record({keys::kConsensusDistance, last, epoch, 0, wall(), distance});
    }
    Evaluation e;
    if (evaluates()) e = evaluate(last, epoch);
    if (comm_.rank() == 0) {
      final_test_accuracy_ = e.accuracy;
      metrics.values[keys::kTestAccuracy] = e.accuracy;
      metrics.values[keys::kTestLoss] = e.loss;
      if (e.perplexity) metrics.values[keys::kTestPerplexity] = *e.perplexity;
      if (e.bits_per_byte) metrics.values[keys::kTestBitsPerByte] = *e.bits_per_byte;
    }
    const bool stop = epoch + 1 < config_.epochs && votes_to_stop(metrics);
    if (stop && comm_.rank() == 0)
      sink_.record({keys::kStoppedEarly, last, epoch, 0, wall(), static_cast<double>(epoch)});
    sink_.flush();
    return stop;
  }

  // The test split, evaluated after `step`; a thread rank's clock counts the CPU it took.
  Evaluation evaluate(std::int64_t step, std::int64_t epoch) {
    return on_derived_clock([&] {
      return evaluate_and_record(*parts_.model, *parts_.dataset, config_, sink_, comm_, shared_evaluation_, step, epoch,
                                 wall(), liveness_);
    });
  }

  // `work` outside the steps (an evaluation, the consensus distance); a thread rank's derived
  // clock counts the CPU it took and its wait for the other ranks' messages.
  template <class Work>
  auto on_derived_clock(Work work) -> decltype(work()) {
    const double start = rank_seconds();
    begin_phase(derived_seconds_);
    auto result = work();
    if (derived_clock_) derived_seconds_ += rank_seconds() - start + phase_waited();
    return result;
  }

  // Every worker knows whether a rule or a function decides (same config, same file).
  bool votes_to_stop(const EpochMetrics& metrics) {
    const bool lua_epoch_end = callbacks_ != nullptr && callbacks_->has("on_epoch_end");
    const bool decided = (parts_.stop_rule && parts_.stop_rule->can_stop()) || lua_epoch_end;
    return decided &&
           decide_stop(parts_.stop_rule.get(), lua_epoch_end ? callbacks_ : nullptr, metrics, comm_, config_.workers);
  }

  const RunConfig& config_;
  WorkerParts& parts_;
  comm::Communicator& comm_;
  MetricsSink& sink_;
  const ProgressFn& progress_;
  RunCallbacks* callbacks_;
  const Checkpointing& checkpointing_;
  Liveness& liveness_;
  const bool shared_evaluation_;
  Trainer trainer_;
  std::optional<ElasticSteps> elastic_;  // an elastic run's
  bool rejoined_ = false;                // a relaunched worker of an elastic run, back in it
  const std::string fingerprint_;
  const std::int64_t steps_per_epoch_ = trainer_.steps_per_epoch();
  TrainingPosition resumed_;  // a fresh run starts before step 0
  Clock::time_point start_, epoch_start_, last_progress_;
  const bool derived_clock_ = rank_clock() == RankClockKind::ThreadCpu;
  double derived_seconds_ = 0, epoch_derived_start_ = 0;
  std::int64_t step_ = 0;
  std::vector<int> members_;                    // churn: the workers present at the last step
  std::optional<ChurnPosition> resumed_churn_;  // churn, elastic: what the checkpoint resumed from kept
  std::int64_t epoch_steps_trained_ = 0;        // steps of this epoch this worker took part in
  std::vector<std::uint8_t> start_state_;       // churn: the optimizer's and compressor's at the start
  double first_loss_ = 0, loss_sum_ = 0;
  double final_test_accuracy_ = -1;
};

}  // namespace

WorkerResult run_worker(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
                        const ProgressFn& progress, RunCallbacks* callbacks, const Checkpointing& checkpointing) {
  const bool shared_evaluation = parts.schedule->traits().exchanges_each_gradient;
  if (parts.network) comm.set_islands(parts.network->islands(comm.size()));
  populate_pages(parts.dataset->train().inputs);
  if (comm.rank() == 0 || shared_evaluation) populate_pages(parts.dataset->evaluation().inputs);
  // An elastic run's workers check in the loop, where a loss is recovered from (a relaunched
  // worker where its generation begins).
  if (comm.elastic() == nullptr) check_identical_start(*parts.model, comm);
  return WorkerLoop(config, parts, comm, sink, progress, callbacks, checkpointing).run();
}

void run_rank(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
              const ProgressFn& progress, RunCallbacks* callbacks, const Checkpointing& checkpointing) {
  if (comm.rank() < config.workers)
    run_worker(config, std::move(parts), comm, sink, progress, callbacks, checkpointing);
  else
    run_server(config, std::move(parts), comm, sink, callbacks, checkpointing);
}

}  // namespace laconic::train
