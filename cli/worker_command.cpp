#include "cli/worker_command.hpp"

#include "cli/emulated_network.hpp"
#include "cli/launcher.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "engine/catalog.hpp"
#include "engine/comm/gloo_communicator.hpp"
#include "engine/core/error.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/worker_message.hpp"
#include "engine/rendezvous_store.hpp"
#include "engine/train/runtime.hpp"
#include "lua/experiment.hpp"

namespace laconic::cli {
namespace {

// Discards metrics when no controller listens (a worker started by hand).
class NullSink : public MetricsSink {
 public:
  void record(const MetricRecord&) override {}
};

// Sends the rank's liveness to the controller every second, from a thread of its own, whatever
// the main thread is doing; a frozen process falls silent (docs/architecture.md, "Liveness").
class HeartbeatThread {
 public:
  HeartbeatThread(MessageWriter& writer, const Liveness& liveness)
      : writer_(writer), liveness_(liveness), thread_([this] { loop(); }) {}
  ~HeartbeatThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      writer_.send(HeartbeatMessage{liveness_.phase(), liveness_.quiet_seconds()});
      writer_.flush();
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
    }
  }

  MessageWriter& writer_;
  const Liveness& liveness_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

// run_facts key of the seconds rank 0 spent in a phase.
std::string phase_fact_key(const std::string& phase) { return "seconds_" + phase; }

}  // namespace

int worker_command(const WorkerArgs& args) {
  // A controller that went away must not kill us mid-write; the write fails and we carry on.
  ::signal(SIGPIPE, SIG_IGN);
  std::optional<MessageWriter> writer;
  if (args.message_fd >= 0) writer.emplace(args.message_fd);
  NullSink null_sink;
  MetricsSink& sink = writer ? static_cast<MetricsSink&>(*writer) : null_sink;
  Liveness liveness;
  std::optional<HeartbeatThread> heartbeat;
  if (writer) heartbeat.emplace(*writer, liveness);
  try {
    engine::EngineCatalog catalog;
    // The file's functions (lr_schedule, on_epoch_end) run here, in the worker.
    lua::LoadOptions load_options;
    load_options.overrides = args.overrides;
    auto loaded = lua::load_experiment_with_callbacks(args.file, catalog, load_options);
    const auto& plan = loaded.plan;
    if (!args.file_hash.empty() && plan.file_hash != args.file_hash)
      throw ConfigError(str_cat("experiment file '", args.file, "' changed since the run was ", "planned (hash ",
                                plan.file_hash, ", expected ", args.file_hash, ")"));
    if (args.run_index >= plan.runs.size())
      throw ConfigError(str_cat("run index ", args.run_index, " out of range: '", args.file, "' expands to ",
                                plan.runs.size(), " runs"));
    const RunConfig& config = plan.runs[args.run_index];
    if (!args.run_name.empty() && config.name != args.run_name)
      throw ConfigError(str_cat("run ", args.run_index, " of '", args.file, "' is '", config.name, "', expected '",
                                args.run_name, "'"));
    const int world = catalog.world_size(config);
    if (world != args.world)
      throw ConfigError(str_cat("run '", config.name, "' wants ", world, " processes, started with ", args.world));
    // One thread per rank for LibTorch and BLAS (docs/architecture.md); rank 0 says so in run_facts.
    train::pin_threads(1);
    if (writer && args.rank == 0) {
      for (const auto& [key, value] : train::runtime_facts()) writer->send(FactMessage{key, value});
      writer->flush();
    }

    liveness.enter("rendezvous");
    if (!args.netns.empty()) join_namespace(args.netns);
    comm::GlooOptions options;
    options.rank = args.rank;
    options.size = args.world;
    options.hostname = args.hostname;
    options.interface = args.interface;
    options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout * 1000));
    // A store of its own, never one its parent holds: a forked process shares the parent's
    // connections, which two processes cannot use at once.
    options.store = comm::prefixed(
        engine::open_store(comm::StoreAddress::parse(args.store), engine::StoreRole::Client, options.timeout),
        args.store_prefix);
    comm::GlooCommunicator comm(options);
    comm.set_message_delay(args.message_delay);
    train::ProgressFn progress;
    if (writer)
      progress = [&](const ProgressMessage& p) {
        writer->send(p);
        writer->flush();
      };
    train::Checkpointing checkpointing{args.checkpoint_dir, args.checkpoint_every, args.resume_step, {}};
    if (writer)
      checkpointing.on_saved = [&](std::int64_t step) {
        writer->send(CheckpointMessage{step});
        writer->flush();
      };
    liveness.enter("loading");
    train::WorkerParts parts = catalog.build(config);
    parts.liveness = &liveness;
    if (args.rank < config.workers)
      train::run_worker(config, std::move(parts), comm, sink, progress, loaded.callbacks.get(), checkpointing);
    else
      train::run_server(config, std::move(parts), comm, sink, loaded.callbacks.get(), checkpointing);
    liveness.enter("finishing");
    sink.flush();
    // Where rank 0's time went, phase by phase (run_facts seconds_*; the controller adds the
    // process start and the teardown it saw).
    if (writer && args.rank == 0) {
      for (const auto& [phase, seconds] : liveness.phase_seconds())
        writer->send(FactMessage{phase_fact_key(phase), str_cat(seconds)});
      writer->flush();
    }
    return 0;
  } catch (const DivergedError& e) {
    if (writer) {
      writer->send(FailureMessage{e.what()});
      writer->flush();
    } else {
      std::cerr << "laconic worker " << args.rank << ": " << e.what() << "\n";
    }
    return kDivergedExitStatus;
  } catch (const std::exception& e) {
    if (writer) {
      writer->send(FailureMessage{e.what()});
      writer->flush();
    } else {
      std::cerr << "laconic worker " << args.rank << ": " << e.what() << "\n";
    }
    return 1;
  }
}

}  // namespace laconic::cli
