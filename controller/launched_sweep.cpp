#include "controller/launched_sweep.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "controller/host_load.hpp"
#include "controller/worker_command.hpp"
#include "controller/worker_processes.hpp"
#include "engine/core/error.hpp"
#include "engine/core/hash.hpp"
#include "engine/core/host_name.hpp"
#include "engine/rendezvous_store.hpp"
#include "reports/format.hpp"

namespace laconic::controller {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds launch_timeout(const SweepOptions& args) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(args.launch_timeout * 1000));
}

// "exited 0", "exited 1", "killed by signal 9" for a wait status.
std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return str_cat("killed by signal ", WTERMSIG(status));
  return str_cat("exited ", WEXITSTATUS(status));
}

}  // namespace

void check_launchable(const SweepOptions& args, const LaunchedRank& launched, const lua::ExperimentPlan& plan,
                      const engine::EngineCatalog& catalog, const std::vector<std::size_t>& selected) {
  if (args.jobs > 1)
    throw ConfigError(str_cat("--jobs starts several controllers on one host; under a launcher (", launched.description,
                              ") every process is one rank: leave --jobs out"));
  if (args.checkpoint_every > 0)
    throw ConfigError(
        "--checkpoint-every is not supported when a launcher starts the ranks: each host would keep "
        "its ranks' checkpoints where rank 0 cannot see them (docs/multi-host.md)");
  std::string wrong;
  int shown = 0;
  for (std::size_t i : selected) {
    const RunConfig& run = plan.runs[i];
    if (catalog.emulates_network(run))
      throw ConfigError(str_cat("run ", i + 1, " (", run.name,
                                ") emulates its link (emulate = true), which builds "
                                "network namespaces on one host; ranks started by a launcher use the hosts' real "
                                "network: set emulate = false"));
    if (catalog.thread_ranks(run))
      throw ConfigError(str_cat("run ", i + 1, " (", run.name,
                                ") places its ranks as threads of one process (placement = threads()); under a "
                                "launcher every process is one rank: use placement = processes(), or run it "
                                "without the launcher"));
    const int world = catalog.world_size(run);
    if (world != launched.world && shown++ < 3)
      wrong += str_cat(wrong.empty() ? "" : ", ", "run ", i + 1, " (", run.name, ") needs ", world);
  }
  if (!wrong.empty())
    throw ConfigError(str_cat("the launcher started ", launched.world, " ranks (", launched.description, "), but ",
                              wrong, shown > 3 ? str_cat(" and ", shown - 3, " more") : std::string(),
                              ": a run's ranks are its workers plus its servers; launch as many, or select the "
                              "runs of one size with --only"));
}

namespace {

// The launch's store; a connection cut short by Ctrl-C or SIGTERM (LibTorch's TCP store gives
// up on an interrupted connect) is the user's stop, not an unreachable store.
std::shared_ptr<comm::KeyValueStore> open_store_unless_stopped(const LaunchedRank& launched, engine::StoreRole role,
                                                               std::chrono::milliseconds timeout,
                                                               const std::atomic<bool>& stop) {
  const auto started = std::chrono::steady_clock::now();
  try {
    return engine::open_store(launched.store, role, timeout);
  } catch (const CommError& e) {
    if (!stop) throw;
    const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    throw StoppedError(str_cat("rank ", launched.rank, " stopped by the user (Ctrl-C or SIGTERM) after waiting ",
                               static_cast<long>(waited), " s for the store (", launched.store.text(), ")"));
  }
}

// Waits for this rank's worker `pid`, passing on the signals rank 0 sends it (`heard` set at each
// order) and SIGTERM once the user stops; its wait status, or nothing once rank 0's connection
// closed or `silent_too_long` (the worker killed and reaped).
std::optional<int> await_worker(pid_t pid, RelayConnection& rank0, Clock::time_point& heard,
                                const std::function<bool()>& silent_too_long, const std::atomic<bool>& stop) {
  int status = 0;
  bool terminated = false;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    const auto while_training = rank0.read_line(std::chrono::milliseconds(200));
    if (while_training) {
      heard = Clock::now();
      const auto said = decode_order(*while_training);
      if (const auto* signal = said ? std::get_if<SignalOrder>(&*said) : nullptr) ::kill(pid, signal->signal);
    } else if (rank0.closed() || silent_too_long()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    if (stop && !terminated) {
      ::kill(pid, SIGTERM);
      terminated = true;
    }
  }
  return status;
}

}  // namespace

RankHello own_hello(const LaunchedRank& launched, const lua::ExperimentPlan& plan, const engine::EngineCatalog& catalog,
                    const std::vector<std::size_t>& selected) {
  std::string planned;
  // The configuration too: two ranks started with other --set values name their runs alike.
  for (std::size_t i : selected)
    planned += str_cat(i, "\t", plan.runs[i].name, "\t", catalog.world_size(plan.runs[i]), "\t",
                       fnv1a_hex(plan.runs[i].to_json().dump()), "\n");
  return RankHello{launched.rank,  launched.world,
                   plan.file_hash, fnv1a_hex(planned),
                   host_name(),    local_address(launched.interface, launched.route_to),
                   host_cores(),   static_cast<long>(::getpid())};
}

LaunchedSweep::LaunchedSweep(const SweepOptions& args, const LaunchedRank& launched, const RankHello& mine,
                             const std::atomic<bool>& stop)
    : launched_(launched) {
  const auto timeout = launch_timeout(args);
  address_ = mine.address;
  // Under Slurm, MPI and the flags nobody else serves a TCP store: rank 0 does, as PyTorch does.
  const bool serve = launched.store.kind == comm::StoreAddress::Kind::Tcp && !launched.store_served_by_launcher;
  store_ =
      open_store_unless_stopped(launched, serve ? engine::StoreRole::Server : engine::StoreRole::Client, timeout, stop);
  std::cout << "laconic: rank 0 of " << launched.world << " (" << launched.description << "), listening on " << address_
            << "; waiting up to " << static_cast<long>(args.launch_timeout) << " s for the other ranks" << std::endl;
  remote_.connections = gather_ranks(*store_, relay_key(launched.launch_id), address_, mine, timeout, nonce_, stop);
  ranks_.push_back(mine);
  for (const auto& connection : remote_.connections) ranks_.push_back(connection->peer());
  std::cout << "laconic: every rank joined: " << hosts() << std::endl;
}

LaunchedSweep::~LaunchedSweep() {
  if (!finished_) finish(1);
}

std::string LaunchedSweep::rendezvous_prefix(std::int64_t run_id) const {
  return str_cat("laconic/", nonce_, "/run-", run_id, "/");
}

std::string LaunchedSweep::hosts() const {
  // host -> its cores, and address -> its ranks
  std::map<std::string, std::pair<int, std::map<std::string, std::string>>> by_host;
  for (const auto& r : ranks_) {
    auto& [cores, addresses] = by_host[r.host];
    cores = r.cores;
    auto& ranks = addresses[r.address];
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r.rank);
  }
  std::string out;
  for (const auto& [host, entry] : by_host) {
    out += str_cat(out.empty() ? "" : "; ", host, " (", entry.first, " cores):");
    for (const auto& [address, ranks] : entry.second) out += str_cat(" ranks ", ranks, " at ", address);
  }
  return out;
}

int LaunchedSweep::ranks_here() const {
  int count = 0;
  for (const auto& r : ranks_) count += r.host == ranks_.front().host ? 1 : 0;
  return count;
}

bool LaunchedSweep::oversubscribed() const {
  std::map<std::string, int> count;
  for (const auto& r : ranks_)
    if (++count[r.host] > r.cores) return true;
  return false;
}

void LaunchedSweep::finish(int status) {
  finished_ = true;
  for (const auto& connection : remote_.connections) connection->send_line(encode(RankOrder{SweepDone{status}}));
}

int follow_rank0(const SweepOptions& args, const LaunchedRank& launched, const lua::ExperimentPlan& plan,
                 RunCallbacks* callbacks, const engine::EngineCatalog& catalog, const RankHello& mine,
                 const std::atomic<bool>& stop) {
  const auto timeout = launch_timeout(args);
  const std::string who = str_cat("laconic rank ", launched.rank, " of ", launched.world);
  std::string nonce;
  std::unique_ptr<RelayConnection> rank0;
  {
    // Only to find rank 0: each run's worker opens a store of its own.
    auto store = open_store_unless_stopped(launched, engine::StoreRole::Client, timeout, stop);
    rank0 = join_rank0(*store, relay_key(launched.launch_id), mine, timeout, nonce, stop);
  }
  std::cout << who << " (" << launched.description << "): joined rank 0 at " << rank0->peer().address << std::endl;
  // Rank 0 speaks every few seconds while a run trains (kRankZeroPingSeconds) and orders the next
  // run right after one ends: silent for longer than the run's timeout and a grace, it is cut off
  // or gone, though a TCP connection over a link that went down stays open for many minutes.
  auto heard = Clock::now();
  double silence_limit = args.launch_timeout;
  const auto silent_too_long = [&](const char* doing) {
    const double silent = std::chrono::duration<double>(Clock::now() - heard).count();
    if (silent <= silence_limit) return false;
    std::cerr << who << ": rank 0 (" << rank0->peer().address << ") silent for " << static_cast<long>(silent) << " s "
              << doing << ", longer than the run's timeout and " << kRankZeroSilenceGraceSeconds
              << " s: it is gone or cut off; stopping" << std::endl;
    return true;
  };
  std::optional<LaunchOrder> current;  // the run ordered last, which a relaunch trains again
  while (true) {
    if (stop) return 130;
    const auto line = rank0->read_line(std::chrono::milliseconds(500));
    if (!line) {
      if (silent_too_long("waiting for its next order")) return 1;
      if (!rank0->closed()) continue;
      std::cerr << who << ": rank 0 is gone (its connection closed): stopping" << std::endl;
      return 1;
    }
    heard = Clock::now();
    const auto order = decode_order(*line);
    if (const auto* done = order ? std::get_if<SweepDone>(&*order) : nullptr) return done->status;
    int incarnation = 0;
    if (const auto* run = order ? std::get_if<LaunchOrder>(&*order) : nullptr) {
      current = *run;
      if (run->run_index < plan.runs.size()) {
        silence_limit = plan.runs[run->run_index].timeout + kRankZeroSilenceGraceSeconds;
        try {
          catalog.preload_data(plan.runs[run->run_index]);
        } catch (const std::exception&) {
          // The worker reads it itself, and its failure says what is wrong.
        }
      }
    } else if (const auto* again = order ? std::get_if<RelaunchOrder>(&*order) : nullptr; again && current) {
      incarnation = again->incarnation;  // an elastic run's worker died: the same run again
    } else {
      continue;  // a signal for a worker already gone, a sign of life
    }
    const std::size_t index = current->run_index;
    const auto started = Clock::now();
    const pid_t pid = fork_worker_process(launched.rank, rank0->fd(), [&](int message_fd) {
      WorkerArgs worker;
      worker.file = args.file;
      worker.order = *current;
      worker.rank = launched.rank;
      worker.incarnation = incarnation;
      worker.store = launched.store.text();
      worker.hostname = mine.address;
      worker.interface = launched.interface;
      worker.message_fd = message_fd;
      // This process planned the same runs from the same file (the hello checked it).
      return train_rank(worker, catalog, [&] { return RankRun{&planned_run(worker, plan), callbacks}; });
    });
    const auto status = await_worker(
        pid, *rank0, heard, [&] { return silent_too_long("while its run trained"); }, stop);
    if (!status) {
      if (rank0->closed())
        std::cerr << who << ": rank 0 is gone (its connection closed): stopped run " << index + 1 << std::endl;
      return 1;
    }
    // The newline first ends a line the worker may have left torn.
    rank0->send_line("\n" + encode(WorkerExit{*status}));
    std::cout << who << ": run " << index + 1 << " (" << current->run_name << "): worker "
              << (incarnation > 0 ? str_cat("relaunch ", incarnation, " ") : std::string()) << describe_status(*status)
              << " after " << reports::human_seconds(std::chrono::duration<double>(Clock::now() - started).count())
              << std::endl;
  }
}

}  // namespace laconic::controller
