#include "cli/worker_command.hpp"

#include "cli/launcher.hpp"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include "engine/catalog.hpp"
#include "engine/comm/gloo_communicator.hpp"
#include "engine/core/error.hpp"
#include "engine/core/worker_message.hpp"
#include "engine/train/runtime.hpp"
#include "lua/experiment.hpp"

namespace laconic::cli {
namespace {

// Discards metrics when no controller listens (a worker started by hand).
class NullSink : public MetricsSink {
 public:
  void record(const MetricRecord&) override {}
};

}  // namespace

int worker_command(const WorkerArgs& args) {
  // A controller that went away must not kill us mid-write; the write fails and we carry on.
  ::signal(SIGPIPE, SIG_IGN);
  std::optional<MessageWriter> writer;
  if (args.message_fd >= 0) writer.emplace(args.message_fd);
  NullSink null_sink;
  MetricsSink& sink = writer ? static_cast<MetricsSink&>(*writer) : null_sink;
  try {
    engine::EngineCatalog catalog;
    // The file's functions (lr_schedule, on_epoch_end) run here, in the worker.
    auto loaded = lua::load_experiment_with_callbacks(args.file, catalog);
    const auto& plan = loaded.plan;
    if (!args.file_hash.empty() && plan.file_hash != args.file_hash)
      throw ConfigError(str_cat("experiment file '", args.file, "' changed since the run was ",
                                "planned (hash ", plan.file_hash, ", expected ", args.file_hash,
                                ")"));
    if (args.run_index >= plan.runs.size())
      throw ConfigError(str_cat("run index ", args.run_index, " out of range: '", args.file,
                                "' expands to ", plan.runs.size(), " runs"));
    const RunConfig& config = plan.runs[args.run_index];
    if (!args.run_name.empty() && config.name != args.run_name)
      throw ConfigError(str_cat("run ", args.run_index, " of '", args.file, "' is '", config.name,
                                "', expected '", args.run_name, "'"));
    const int world = catalog.world_size(config);
    if (world != args.world)
      throw ConfigError(str_cat("run '", config.name, "' wants ", world,
                                " processes, started with ", args.world));
    // One thread per rank for LibTorch and BLAS (docs/architecture.md); rank 0 says so in run_facts.
    train::pin_threads(1);
    if (writer && args.rank == 0) {
      for (const auto& [key, value] : train::runtime_facts()) writer->send(FactMessage{key, value});
      writer->flush();
    }

    comm::GlooOptions options;
    options.rank = args.rank;
    options.size = args.world;
    options.store_dir = args.store;
    options.hostname = args.hostname;
    options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout * 1000));
    comm::GlooCommunicator comm(options);
    train::ProgressFn progress;
    if (writer) progress = [&](const ProgressMessage& p) { writer->send(p); writer->flush(); };
    train::Checkpointing checkpointing{args.checkpoint_dir, args.checkpoint_every, args.resume_step, {}};
    if (writer)
      checkpointing.on_saved = [&](std::int64_t step) {
        writer->send(CheckpointMessage{step});
        writer->flush();
      };
    if (args.rank < config.workers)
      train::run_worker(config, catalog.build(config), comm, sink, progress,
                        loaded.callbacks.get(), checkpointing);
    else
      train::run_server(config, catalog.build(config), comm, sink, loaded.callbacks.get(), checkpointing);
    sink.flush();
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
