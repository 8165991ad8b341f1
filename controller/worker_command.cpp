#include "controller/worker_command.hpp"

#include "controller/emulated_network.hpp"
#include "controller/launcher.hpp"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <optional>

#include "engine/catalog.hpp"
#include "engine/comm/gloo_communicator.hpp"
#include "engine/comm/stamped_arrival_board.hpp"
#include "engine/core/error.hpp"
#include "engine/core/liveness.hpp"
#include "engine/core/periodic_thread.hpp"
#include "engine/core/worker_message.hpp"
#include "engine/rendezvous_store.hpp"
#include "engine/thread_ranks.hpp"
#include "engine/train/runtime.hpp"
#include "engine/train/worker.hpp"
#include "lua/experiment.hpp"
#include "storage/run_facts.hpp"

namespace laconic::controller {

bool stamped_arrivals_requested() {
  const char* value = std::getenv("LACONIC_ARRIVALS");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "auto") return false;
  if (std::string(value) == "stamps") return true;
  throw ConfigError(str_cat("LACONIC_ARRIVALS is '", value, "': expected 'auto' (the default) or 'stamps'"));
}

namespace {

// LACONIC_FAULT_KILL=RANK:SEND[,SEND...]: rank RANK's first launch kills itself just before its
// SEND-th message out, its first relaunch before the second SEND-th, and so on (a scripted real
// fault, for elastic runs; docs/topologies.md); 0 for other ranks and later launches.
std::uint64_t fault_kill_for(int rank, int incarnation) {
  const char* value = std::getenv("LACONIC_FAULT_KILL");
  if (value == nullptr || *value == '\0') return 0;
  const auto bad = [&] {
    return ConfigError(str_cat("LACONIC_FAULT_KILL is '", value, "': expected RANK:SEND[,SEND...], such as 2:300"));
  };
  int fault_rank = -1, used = 0;
  if (std::sscanf(value, "%d:%n", &fault_rank, &used) != 1 || used == 0 || fault_rank < 0) throw bad();
  std::vector<std::uint64_t> sends;
  for (const char* at = value + used;; ++at) {
    unsigned long long send = 0;
    int length = 0;
    if (std::sscanf(at, "%llu%n", &send, &length) != 1 || send == 0 || !std::isdigit(static_cast<unsigned char>(*at)))
      throw bad();
    sends.push_back(send);
    at += length;
    if (*at == '\0') break;
    if (*at != ',') throw bad();
  }
  if (fault_rank != rank || incarnation >= static_cast<int>(sends.size())) return 0;
  return sends[static_cast<std::size_t>(incarnation)];
}

// Discards metrics when no controller listens (a worker started by hand).
class NullSink : public MetricsSink {
 public:
  void record(const MetricRecord&) override {}
};

// Sends the liveness of the process's ranks to the controller every second, from a thread of its
// own, whatever the ranks are doing: the phase and quiet time of the rank that made no progress
// longest; a frozen process falls silent (docs/architecture.md, "Liveness").
class HeartbeatThread {
 public:
  HeartbeatThread(MessageWriter& writer, const std::deque<Liveness>& liveness) : writer_(writer), liveness_(liveness) {}

 private:
  void beat() {
    const Liveness* quietest = &liveness_.front();
    for (const Liveness& l : liveness_)
      if (l.quiet_seconds() > quietest->quiet_seconds()) quietest = &l;
    writer_.send(HeartbeatMessage{quietest->phase(), quietest->quiet_seconds()});
    writer_.flush();
  }

  MessageWriter& writer_;
  const std::deque<Liveness>& liveness_;
  PeriodicThread thread_{std::chrono::seconds(1), [this] { beat(); }};  // last
};

// run_facts key of the seconds rank 0 spent in a phase.
std::string phase_fact_key(const std::string& phase) { return "seconds_" + phase; }

// Where a process's ranks' messages go: its controller's pipe, or nowhere (a worker started by
// hand).
class RankChannel {
 public:
  RankChannel(int message_fd, int ranks) : liveness_(static_cast<std::size_t>(ranks)) {
    if (message_fd >= 0) writer_.emplace(message_fd);
    if (writer_) heartbeat_.emplace(*writer_, liveness_);
  }
  MetricsSink& sink() { return writer_ ? static_cast<MetricsSink&>(*writer_) : null_sink_; }
  /// The process's (first) rank's.
  Liveness& liveness() { return liveness_.front(); }
  /// One per rank of the process.
  std::deque<Liveness>& every_liveness() { return liveness_; }
  bool connected() const { return writer_.has_value(); }
  template <class Message>
  void send(const Message& message) {
    if (!writer_) return;
    writer_->send(message);
    writer_->flush();
  }
  /// Says why the rank failed: on the pipe, or on standard error without one.
  void fail(int rank, const std::string& why) {
    if (writer_)
      send(FailureMessage{why});
    else
      std::cerr << "laconic worker " << rank << ": " << why << "\n";
  }

 private:
  std::optional<MessageWriter> writer_;
  NullSink null_sink_;
  std::deque<Liveness> liveness_;
  std::optional<HeartbeatThread> heartbeat_;  // last: stops before what it reads goes
};

std::chrono::milliseconds timeout_of(const RunConfig& config) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout * 1000));
}

// The run's store, under its prefix: one of this process's own, never one its parent holds (a
// forked process shares the parent's connections, which two processes cannot use at once).
std::shared_ptr<comm::KeyValueStore> open_run_store(const WorkerArgs& args, const RunConfig& config) {
  return comm::prefixed(
      engine::open_store(comm::StoreAddress::parse(args.store), engine::StoreRole::Client, timeout_of(config)),
      args.order.store_prefix);
}

// Joins the run's rendezvous through `store` and connects the full mesh (an elastic run's
// current generation).
std::unique_ptr<comm::GlooCommunicator> connect(const WorkerArgs& args, const RunConfig& config,
                                                std::shared_ptr<comm::KeyValueStore> store,
                                                std::shared_ptr<comm::ElasticMembership> elastic) {
  comm::GlooOptions options;
  options.rank = args.rank;
  options.size = args.order.world();
  options.hostname = args.hostname;
  options.interface = args.interface;
  options.timeout = timeout_of(config);
  options.stamped_arrivals = stamped_arrivals_requested();
  options.store = std::move(store);
  options.elastic = std::move(elastic);
  options.die_before_send = fault_kill_for(args.rank, args.incarnation);
  auto comm = std::make_unique<comm::GlooCommunicator>(options);
  comm->set_message_delay(args.message_delay, args.message_delay_between);
  return comm;
}

// The run's rank `args.rank` as this process: Gloo to the other ranks' processes.
void train_process_rank(const WorkerArgs& args, const engine::EngineCatalog& catalog, const RankRun& run,
                        RankChannel& channel, const train::ProgressFn& progress) {
  const RunConfig& config = *run.config;
  channel.liveness().enter("rendezvous");
  if (!args.netns.empty()) join_namespace(args.netns);
  const auto store = open_run_store(args, config);
  // An elastic run's membership; a relaunched worker waits to be admitted, and the run may end first.
  std::shared_ptr<comm::ElasticMembership> elastic;
  if (config.elastic)
    elastic = std::make_shared<comm::ElasticMembership>(store, args.rank, args.order.world(), args.incarnation,
                                                        timeout_of(config),
                                                        comm::ListenAddress{args.hostname, args.interface});
  // A relaunch whose host cannot reach worker 0 yet waits, a bounded try at a time.
  const auto still_cut_off = [&](const std::string&) { channel.liveness().tick(); };
  if (elastic && elastic->relaunched() && !elastic->await_admission(still_cut_off)) return;
  const auto comm = connect(args, config, store, elastic);
  // How time_wait is measured: ranks on one host share an arrival board, on several they stamp
  // their messages with arrivals on rank 0's clock, whose offsets' worst error rank 0 knows (the
  // rendezvous's now, the worst of every estimate once the rank is done).
  const comm::StampedArrivalBoard* stamps = args.rank == 0 ? comm->stamped_arrivals() : nullptr;
  const auto report_clock_error = [&] {
    if (stamps != nullptr) channel.send(FactMessage{storage::fact::kClockOffsetError, str_cat(stamps->worst_error())});
  };
  if (args.rank == 0 && args.order.world() > 1) {
    const auto how = elastic             ? storage::WaitMeasured::Barrier
                     : stamps != nullptr ? storage::WaitMeasured::MessageStamps
                                         : storage::WaitMeasured::ArrivalBoard;
    channel.send(FactMessage{storage::fact::kWaitMeasured, storage::wait_measured_text(how)});
    report_clock_error();
  }
  train::Checkpointing checkpointing{args.checkpoint_dir, args.checkpoint_every, args.resume_step, {}};
  if (channel.connected()) checkpointing.on_saved = [&](std::int64_t step) { channel.send(CheckpointMessage{step}); };
  channel.liveness().enter("loading");
  train::WorkerParts parts = catalog.build(config, args.rank);
  parts.liveness = &channel.liveness();
  train::run_rank(config, std::move(parts), *comm, channel.sink(), progress, run.callbacks, checkpointing);
  report_clock_error();
}

void train(const WorkerArgs& args, const engine::EngineCatalog& catalog, const RankRun& run, RankChannel& channel) {
  const RunConfig& config = *run.config;
  // One thread per rank for LibTorch and BLAS (docs/architecture.md); rank 0 says so in run_facts.
  train::pin_threads(1);
  if (args.rank == 0)
    for (const auto& [key, value] : train::runtime_facts()) channel.send(FactMessage{key, value});
  train::ProgressFn progress;
  if (channel.connected()) progress = [&](const ProgressMessage& p) { channel.send(p); };
  if (args.order.resolved.thread_ranks()) {
    // placement = threads(): every rank of the run in this process (engine/thread_ranks.hpp).
    LACONIC_ENFORCE(args.rank == 0, "thread rank ", args.rank, ": a run's thread ranks are all in one process");
    channel.liveness().enter("loading");
    engine::train_thread_ranks(catalog, config, run.callbacks, {channel.sink(), channel.every_liveness(), progress});
  } else {
    train_process_rank(args, catalog, run, channel, progress);
  }
  channel.liveness().enter("finishing");
  channel.sink().flush();
  // Where rank 0's time went, phase by phase (run_facts seconds_*; the controller adds the
  // process start and the teardown it saw).
  if (args.rank == 0)
    for (const auto& [phase, seconds] : channel.liveness().phase_seconds())
      channel.send(FactMessage{phase_fact_key(phase), str_cat(seconds)});
}

}  // namespace

const RunConfig& planned_run(const WorkerArgs& args, const lua::ExperimentPlan& plan) {
  if (!args.file_hash.empty() && plan.file_hash != args.file_hash)
    throw ConfigError(str_cat("experiment file '", args.file, "' changed since the run was ", "planned (hash ",
                              plan.file_hash, ", expected ", args.file_hash, ")"));
  const LaunchOrder& order = args.order;
  if (order.run_index >= plan.runs.size())
    throw ConfigError(str_cat("run index ", order.run_index, " out of range: '", args.file, "' expands to ",
                              plan.runs.size(), " runs"));
  const RunConfig& config = plan.runs[order.run_index];
  if (!order.run_name.empty() && config.name != order.run_name)
    throw ConfigError(str_cat("run ", order.run_index, " of '", args.file, "' is '", config.name, "', expected '",
                              order.run_name, "'"));
  return config;
}

int train_rank(const WorkerArgs& args, const engine::EngineCatalog& catalog, const std::function<RankRun()>& find_run) {
  // A controller that went away must not kill us mid-write; the write fails and we carry on.
  ::signal(SIGPIPE, SIG_IGN);
  RankChannel channel(args.message_fd, args.order.ranks_per_process());
  try {
    train(args, catalog, find_run(), channel);
    return 0;
  } catch (const DivergedError& e) {
    channel.fail(args.rank, e.what());
    return kDivergedExitStatus;
  } catch (const std::exception& e) {
    channel.fail(args.rank, e.what());
    return 1;
  }
}

int worker_command(const WorkerArgs& args) {
  engine::EngineCatalog catalog;
  std::optional<lua::LoadedExperiment> loaded;
  return train_rank(args, catalog, [&] {
    // The file's functions (lr_schedule, on_epoch_end) run here, in the worker.
    lua::LoadOptions load_options;
    load_options.overrides = args.overrides;
    loaded = lua::load_experiment_with_callbacks(args.file, catalog, load_options);
    return RankRun{&planned_run(args, loaded->plan), loaded->callbacks.get()};
  });
}

}  // namespace laconic::controller
