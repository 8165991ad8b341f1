// The parameter server's process: the rounds of engine/topology/parameter_server.hpp, with the
// optimizer step on its own copy of the model when workers pull weights.
#include <chrono>
#include <cstring>

#include "engine/core/error.hpp"
#include "engine/topology/parameter_server.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/worker.hpp"
#include "engine/core/metric_keys.hpp"

namespace laconic::train {
namespace {

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
  return read_checkpoint(path, fingerprint, rank, [&](StateReader& in, const TrainingPosition& position) {
    load_model(in, *parts.model);
    parts.optimizer->load_state(in);
    codec.set_epoch(position.epoch);  // as a fresh compressor would have been told
    codec.load_state(in);
    load_torch_generator(in);
  });
}

}  // namespace

void run_server(const RunConfig& config, WorkerParts parts, comm::Communicator& comm,
                MetricsSink& sink, RunCallbacks* callbacks, const Checkpointing& checkpointing) {
  if (parts.liveness) parts.liveness->enter("serving");
  auto start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto* topology = dynamic_cast<topology::ParameterServerTopology*>(parts.topology.get());
  LACONIC_ENFORCE(topology != nullptr, "rank ", comm.rank(), " is beyond the ", config.workers,
                  " workers, but topology '", parts.topology->name(), "' has no servers");
  const bool resuming = checkpointing.resume_step >= 0;
  if ((checkpointing.saves() || resuming) && topology->staleness() >= 0)
    throw ConfigError(str_cat("schedule ", config.schedule.name, ": an asynchronous parameter server cannot be ",
                              "checkpointed (no round that every worker passes)"));
  check_identical_start(*parts.model, comm);
  parts.compressor->set_seed(static_cast<std::uint64_t>(config.seed), comm.rank());

  std::vector<torch::Tensor> params = parts.model->parameters();
  std::int64_t total = 0;
  for (auto& p : params) total += p.numel();
  torch::Tensor flat_grad = torch::zeros({total});
  std::int64_t offset = 0;
  for (auto& p : params) {
    p.mutable_grad() = flat_grad.narrow(0, offset, p.numel()).view_as(p);
    offset += p.numel();
  }
  torch::Tensor before = torch::zeros({total});
  // This server's shard of the flat parameters, and the compressor that codes it.
  const int server_index = comm.rank() - static_cast<int>(config.workers);
  const auto [shard_begin, shard_end] = topology::server_shard(
      static_cast<std::size_t>(total), static_cast<int>(topology->options().servers),
      server_index);
  const std::size_t shard_size = shard_end - shard_begin;
  std::unique_ptr<compress::Compressor> shard_compressor =
      topology->make_shard_compressor(shard_size, server_index, comm.rank());
  compress::Compressor& codec = shard_compressor ? *shard_compressor : *parts.compressor;
  // The shard's gradient placed in the flat gradient (zero elsewhere), then one optimizer step:
  // elementwise, so the shard changes as it would on a single server.
  auto step_on_shard = [&](std::span<const float> shard_gradient) {
    flat_grad.zero_();
    std::memcpy(flat_grad.data_ptr<float>() + shard_begin, shard_gradient.data(),
                shard_gradient.size_bytes());
    parts.optimizer->step(params);
  };
  auto flatten_into = [&](torch::Tensor& out) {
    torch::NoGradGuard no_grad;
    std::int64_t at = 0;
    for (auto& p : params) {
      out.narrow(0, at, p.numel()).copy_(p.detach().reshape({-1}));
      at += p.numel();
    }
  };

  const bool weights = topology->pulls_weights();
  // The server's optimizer follows the run's learning-rate schedule, by round (synchronous) or
  // by update / workers (asynchronous).
  const std::int64_t per_epoch = steps_per_epoch(config, *parts.dataset);
  // The pull compressor follows the workers' epochs and steps (ratio schedules, DGC's warm-up).
  std::int64_t codec_epoch = 0;
  auto follow_step = [&](std::span<compress::Compressor* const> codecs, std::int64_t step) {
    const std::int64_t epoch = step / per_epoch;
    const bool new_epoch = epoch != codec_epoch;
    codec_epoch = epoch;
    for (compress::Compressor* c : codecs) {
      if (new_epoch) c->set_epoch(epoch);
      c->set_step({epoch, step, callbacks});
    }
  };
  auto schedule_lr = [&](std::int64_t step) {
    if (callbacks != nullptr && callbacks->has("lr_schedule")) {
      parts.optimizer->set_lr(callbacks->learning_rate(step / per_epoch, step));
      return;
    }
    if (!parts.lr_schedule) return;
    parts.optimizer->set_lr_factor(lr_factor(*parts.lr_schedule, parts.lr_schedule_spec,
                                             {step, step / per_epoch, per_epoch, config.epochs,
                                              config.workers}));
  };
  topology::ServerUpdate update = [&](std::span<const float> mean, std::span<float> out) {
    if (!weights) {
      std::memcpy(out.data(), mean.data(), mean.size_bytes());
      return;
    }
    // Step the server's optimizer with the mean gradient; send the change of the weights.
    flatten_into(before);
    step_on_shard(mean);
    torch::Tensor after = torch::zeros({total});
    flatten_into(after);
    torch::Tensor change = after - before;
    std::memcpy(out.data(), change.data_ptr<float>() + shard_begin, out.size_bytes());
  };

  if (topology->staleness() >= 0) {
    // stale_sync / async: each push is one optimizer step of its own. Compressed pulls: one
    // compressor per worker, whose copies of the weights differ.
    std::vector<std::unique_ptr<compress::Compressor>> pull_owned;
    std::vector<compress::Compressor*> pull;
    if (topology->options().compress_pull)
      for (int w = 0; w < static_cast<int>(config.workers); ++w) {
        pull_owned.push_back(topology->make_pull_compressor(shard_size, server_index, w));
        pull.push_back(pull_owned.back().get());
      }
    std::int64_t index = 0;
    topology::serve_asynchronously(
        topology->options(), topology->staleness(), static_cast<int>(config.workers),
        shard_size, codec, pull, comm,
        [&](std::span<const float> gradient) {
          schedule_lr(index / config.workers);
          follow_step(pull, index / config.workers);
          step_on_shard(gradient);
        },
        [&](std::span<float> out) {
          flatten_into(before);
          std::memcpy(out.data(), before.data_ptr<float>() + shard_begin, out.size_bytes());
        },
        [&](const topology::AppliedUpdate& u) {
          if (parts.liveness) parts.liveness->tick();
          auto put = [&](const char* key, int worker, double value) {
            sink.record({key, index, -1, worker, wall(), value});
          };
          put(keys::kStaleness, u.worker, static_cast<double>(u.staleness));
          put(keys::kUpdateLag, u.worker, static_cast<double>(u.lag));
          put(keys::kTimeCommunicate, comm.rank(), u.stats.time_communicate);
          put(keys::kTimeDecompress, comm.rank(), u.stats.time_decompress);
          put(keys::kTimeCompress, comm.rank(), u.stats.time_compress);
          put(keys::kBytesSent, comm.rank(), static_cast<double>(u.stats.bytes_sent));
          put(keys::kBytesReceived, comm.rank(), static_cast<double>(u.stats.bytes_received));
          put(keys::kBytesDense, comm.rank(), static_cast<double>(u.stats.bytes_dense));
          if (parts.network)
            put(keys::kProjectedTimeCommunicate, comm.rank(), parts.network->project(u.stats.traffic));
          ++index;
        });
    sink.flush();
    return;
  }

  const std::string fingerprint = config_fingerprint(config);
  std::int64_t first_round = 0;
  if (resuming) {
    const std::string path = checkpoint_path(checkpointing.dir, comm.rank(), checkpointing.resume_step);
    const TrainingPosition resumed = load_server_checkpoint(path, fingerprint, comm.rank(), parts, codec);
    LACONIC_ENFORCE(resumed.step == checkpointing.resume_step, "checkpoint ", path, " is of step ", resumed.step);
    first_round = resumed.step;
    codec_epoch = resumed.epoch;
    start -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(resumed.wall));
  }
  topology::ParameterServer server(topology->options(), static_cast<int>(config.workers),
                                   shard_size);
  for (std::int64_t round = first_round;; ++round) {
    // Round r serves the workers' step r: a checkpoint before it pairs with theirs.
    if (checkpointing.saves() && round % checkpointing.every == 0 && round > first_round) {
      sink.flush();  // the rounds before it are with the controller first
      TrainingPosition here;
      here.step = round;
      here.epoch = codec_epoch;
      here.wall = wall();
      if (parts.liveness) parts.liveness->enter("checkpointing");
      save_server_checkpoint(checkpoint_path(checkpointing.dir, comm.rank(), round), fingerprint, comm.rank(), here,
                             parts, codec);
      if (parts.liveness) parts.liveness->enter("serving");
      if (checkpointing.on_saved) checkpointing.on_saved(round);
    }
    const auto t = std::chrono::steady_clock::now();
    schedule_lr(round);
    compress::Compressor* const codecs[] = {&codec};
    follow_step(codecs, round);
    const topology::ServerRound r = server.serve_round(codec, comm, update);
    if (parts.liveness) parts.liveness->tick();
    if (r.done) break;
    const double step_time =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    auto put = [&](const char* key, double value) {
      sink.record({key, round, -1, comm.rank(), wall(), value});
    };
    put(keys::kTimeCompress, r.stats.time_compress);
    put(keys::kTimeDecompress, r.stats.time_decompress);
    put(keys::kTimeCommunicate, r.stats.time_communicate);
    put(keys::kTimeStep, step_time);
    put(keys::kBytesSent, static_cast<double>(r.stats.bytes_sent));
    put(keys::kBytesReceived, static_cast<double>(r.stats.bytes_received));
    put(keys::kBytesDense, static_cast<double>(r.stats.bytes_dense));
    put(keys::kPayloadBytes, static_cast<double>(r.stats.payload_bytes));
    if (parts.network) {
      const double projected = parts.network->project(r.stats.traffic);
      put(keys::kProjectedTimeCommunicate, projected);
      put(keys::kProjectedTimeStep, step_time - r.stats.time_communicate + projected);
    }
  }
  sink.flush();
}

}  // namespace laconic::train
