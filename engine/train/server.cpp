// The parameter server's process: the rounds of engine/topology/parameter_server/, with the
// optimizer step on its own copy of the model when workers pull weights.
#include <chrono>
#include <cstring>

#include "engine/core/error.hpp"
#include "engine/core/metric_keys.hpp"
#include "engine/core/rank_clock.hpp"
#include "engine/topology/parameter_server/asynchronous_server.hpp"
#include "engine/topology/parameter_server/synchronous_server.hpp"
#include "engine/topology/parameter_server/worker_side.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/step_helpers.hpp"
#include "engine/train/worker.hpp"

namespace laconic::train {
namespace {

using Clock = std::chrono::steady_clock;

// A synchronous server's checkpoint before round `position.step`: its weights (the workers'
// pulls are changes of them), its optimizer, the compressor coding its shard, the epoch that
// compressor was last told.
void save_server_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                            const TrainingPosition& position, WorkerParts& parts, const compress::Compressor& codec) {
  write_checkpoint(path, fingerprint, rank, position, [&](StateWriter& out) {
    save_model(out, *parts.model);
    parts.optimizer->save_state(out);
    codec.save_state(out);
    save_torch_generator(out);
  });
}

TrainingPosition load_server_checkpoint(const std::string& path, const std::string& fingerprint, int rank,
                                        WorkerParts& parts, compress::Compressor& codec) {
  return read_checkpoint(path, fingerprint, rank, [&](StateReader& in, const TrainingPosition&) {
    load_model(in, *parts.model);
    parts.optimizer->load_state(in);
    codec.load_state(in);  // told its epoch by the first advance() after
    load_torch_generator(in);
  });
}

// The server's copy of the model and what it does with it: its shard of the flat parameters,
// the compressor coding that shard, an optimizer step with a shard's gradient, the learning-rate
// schedule and the pull compressors' epochs, and the metrics it records.
class ServerProcess : public topology::ServerModel {
 public:
  ServerProcess(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm, MetricsSink& sink,
                RunCallbacks* callbacks)
      : config_(config),
        parts_(parts),
        comm_(comm),
        sink_(sink),
        callbacks_(callbacks),
        topology_(dynamic_cast<topology::ParameterServerTopology*>(parts.topology.get())),
        params_(parts.model->parameters()),
        per_epoch_(steps_per_epoch(config, *parts.dataset)) {
    LACONIC_ENFORCE(topology_ != nullptr, "rank ", comm.rank(), " is beyond the ", config.workers,
                    " workers, but topology '", parts.topology->name(), "' has no servers");
    flat_grad_ = attach_flat_gradient(params_);
    const std::int64_t total = flat_grad_.numel();
    before_ = torch::zeros({total});
    after_ = torch::zeros({total});
    const int index = comm.rank() - static_cast<int>(config.workers);
    std::tie(shard_begin_, shard_end_) =
        topology::server_shard(static_cast<std::size_t>(total), static_cast<int>(options().servers), index);
    shard_compressor_ = topology_->make_shard_compressor(shard_size(), index, comm.rank());
    if (options().compress_pull && topology_->staleness())
      for (int w = 0; w < static_cast<int>(config.workers); ++w) {
        pull_owned_.push_back(topology_->make_pull_compressor(shard_size(), index, w));
        pull_.push_back(pull_owned_.back().get());
      }
  }

  const topology::ParameterServerOptions& options() const { return topology_->options(); }
  std::optional<std::int64_t> staleness() const { return topology_->staleness(); }
  std::size_t shard_size() const { return shard_end_ - shard_begin_; }
  compress::Compressor& codec() { return shard_compressor_ ? *shard_compressor_ : *parts_.compressor; }
  std::span<compress::Compressor* const> pull_compressors() const { return pull_; }
  double wall() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void shift_start(double seconds) {
    start_ -= std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  std::int64_t codec_epoch() const { return codec_epoch_; }
  void set_codec_epoch(std::int64_t epoch) { codec_epoch_ = epoch; }

  /// Before serving the workers' step `step`: the optimizer's rate, and the epoch and step the
  /// compressors that code replies follow (ratio schedules, DGC's warm-up).
  void prepare_step(std::int64_t step, std::span<compress::Compressor* const> codecs) {
    const std::int64_t epoch = step / per_epoch_;
    set_learning_rate(parts_, callbacks_, config_, step, epoch, per_epoch_);
    codec_epoch_ = epoch;
    for (compress::Compressor* c : codecs) c->advance({epoch, step, callbacks_});
  }

  /// The synchronous round's update: the mean itself (pull = "gradients"), or the change of the
  /// weights after an optimizer step with it (pull = "weights").
  void round_update(std::span<const float> mean, std::span<float> out) {
    if (!topology_->pulls_weights()) {
      std::memcpy(out.data(), mean.data(), mean.size_bytes());
      return;
    }
    flatten_into(before_);
    apply(mean);
    flatten_into(after_);
    const torch::Tensor change = after_ - before_;
    std::memcpy(out.data(), change.data_ptr<float>() + shard_begin_, out.size_bytes());
  }

  // topology::ServerModel, for the asynchronous server: each push is an optimizer step.
  void apply(std::span<const float> shard_gradient) override {
    // The shard's gradient placed in the flat gradient (zero elsewhere), then one optimizer step:
    // elementwise, so the shard changes as it would on a single server.
    flat_grad_.zero_();
    std::memcpy(flat_grad_.data_ptr<float>() + shard_begin_, shard_gradient.data(), shard_gradient.size_bytes());
    parts_.optimizer->step(params_);
  }
  void read_weights(std::span<float> out) override {
    flatten_into(before_);
    std::memcpy(out.data(), before_.data_ptr<float>() + shard_begin_, out.size_bytes());
  }
  void on_update(const topology::AppliedUpdate& u) override {
    parts_.liveness->tick();
    // The pushing worker's staleness under its rank, the server's traffic and times under its own.
    auto put_for = [&](int worker) {
      return [&, worker](const char* key, double value) { sink_.record({key, updates_, -1, worker, wall(), value}); };
    };
    put_for(u.worker)(keys::kStaleness, static_cast<double>(u.staleness));
    put_for(u.worker)(keys::kUpdateLag, static_cast<double>(u.lag));
    if (parts_.network) parts_.network->set_clock(wall());
    record_exchange(put_for(comm_.rank()), u.stats, parts_.network.get());
    ++updates_;
    // The next push's optimizer step: its schedule's rate, by update / workers.
    prepare_step(updates_ / config_.workers, pull_);
  }

  /// A synchronous round's measurements, under the server's rank.
  void record_round(std::int64_t round, const topology::ServerRound& r, double step_time) {
    const PutMetric put = [&](const char* key, double value) {
      sink_.record({key, round, -1, comm_.rank(), wall(), value});
    };
    if (parts_.network) parts_.network->set_clock(std::max(0.0, wall() - step_time));
    const RecordedCommunication recorded = record_exchange(put, r.stats, parts_.network.get());
    // Its step with the communication as recorded (a thread rank's: the projection in place of
    // its collectives' CPU).
    const double seconds = step_time + (recorded.communicate - r.stats.time_communicate);
    put(keys::kTimeStep, seconds);
    put(keys::kPayloadBytes, static_cast<double>(r.stats.payload_bytes));
    if (parts_.network) put(keys::kProjectedTimeStep, seconds - recorded.communicate + recorded.projected);
  }

 private:
  void flatten_into(torch::Tensor& out) {
    torch::NoGradGuard no_grad;
    std::int64_t at = 0;
    for (auto& p : params_) {
      out.narrow(0, at, p.numel()).copy_(p.detach().reshape({-1}));
      at += p.numel();
    }
  }

  const RunConfig& config_;
  WorkerParts& parts_;
  comm::Communicator& comm_;
  MetricsSink& sink_;
  RunCallbacks* callbacks_;
  topology::ParameterServerTopology* topology_;
  std::vector<torch::Tensor> params_;
  torch::Tensor flat_grad_, before_, after_;
  std::size_t shard_begin_ = 0, shard_end_ = 0;
  std::unique_ptr<compress::Compressor> shard_compressor_;
  std::vector<std::unique_ptr<compress::Compressor>> pull_owned_;
  std::vector<compress::Compressor*> pull_;  // asynchronous compressed pulls: one per worker
  std::int64_t per_epoch_;
  std::int64_t codec_epoch_ = 0;
  std::int64_t updates_ = 0;  // asynchronous: updates applied
  Clock::time_point start_ = Clock::now();
};

// Rounds until every worker has finished, checkpointing every `checkpointing.every` rounds.
void serve_rounds(const RunConfig& config, WorkerParts& parts, comm::Communicator& comm, MetricsSink& sink,
                  ServerProcess& server, const Checkpointing& checkpointing) {
  const std::string fingerprint = config_fingerprint(config);
  std::int64_t first_round = 0;
  if (checkpointing.resume_step >= 0) {
    const std::string path = checkpoint_path(checkpointing.dir, comm.rank(), checkpointing.resume_step);
    const TrainingPosition resumed = load_server_checkpoint(path, fingerprint, comm.rank(), parts, server.codec());
    LACONIC_ENFORCE(resumed.step == checkpointing.resume_step, "checkpoint ", path, " is of step ", resumed.step);
    first_round = resumed.step;
    server.set_codec_epoch(resumed.epoch);
    server.shift_start(resumed.wall);
  }
  topology::SynchronousServer rounds(server.options(), static_cast<int>(config.workers), server.shard_size());
  for (std::int64_t round = first_round;; ++round) {
    // Round r serves the workers' step r: a checkpoint before it pairs with theirs.
    if (checkpointing.saves() && round % checkpointing.every == 0 && round > first_round) {
      sink.flush();  // the rounds before it are with the controller first
      TrainingPosition here;
      here.step = round;
      here.epoch = server.codec_epoch();
      here.wall = server.wall();
      parts.liveness->enter("checkpointing");
      save_server_checkpoint(checkpoint_path(checkpointing.dir, comm.rank(), round), fingerprint, comm.rank(), here,
                             parts, server.codec());
      parts.liveness->enter("serving");
      if (checkpointing.on_saved) checkpointing.on_saved(round);
    }
    const double t = rank_seconds();
    compress::Compressor* const codecs[] = {&server.codec()};
    server.prepare_step(round, codecs);
    const topology::ServerRound r =
        rounds.serve_round(server.codec(), comm,
                           [&](std::span<const float> mean, std::span<float> out) { server.round_update(mean, out); });
    parts.liveness->tick();
    if (r.done) break;
    server.record_round(round, r, rank_seconds() - t);
  }
}

}  // namespace

void run_server(const RunConfig& config, WorkerParts parts, comm::Communicator& comm, MetricsSink& sink,
                RunCallbacks* callbacks, const Checkpointing& checkpointing) {
  parts.liveness->enter("serving");
  if (parts.network) comm.set_islands(parts.network->islands(comm.size()));
  ServerProcess server(config, parts, comm, sink, callbacks);
  if ((checkpointing.saves() || checkpointing.resume_step >= 0) && server.staleness())
    throw ConfigError(str_cat("schedule ", config.schedule.name, ": an asynchronous parameter server cannot be ",
                              "checkpointed (no round that every worker passes)"));
  check_identical_start(*parts.model, comm);
  // A thread rank's derived clock starts with the workers' first step: from here, the server's
  // moves with its CPU and with the pushes it waits for (engine/core/rank_clock.hpp).
  begin_phase(0);
  if (const auto staleness = server.staleness()) {
    // stale_sync / async: each push is one optimizer step of its own.
    server.prepare_step(0, server.pull_compressors());
    topology::AsynchronousServer(server.options(), *staleness, static_cast<int>(config.workers), server.shard_size())
        .serve(comm, server.codec(), server.pull_compressors(), server);
  } else {
    serve_rounds(config, parts, comm, sink, server, checkpointing);
  }
  sink.flush();
}

}  // namespace laconic::train
