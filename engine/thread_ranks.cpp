#include "engine/thread_ranks.hpp"

#include <malloc.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/core/compute_gate.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::engine {
namespace {

// Dozens of ranks allocate and free their activations every step: glibc would hand each thread
// an arena of its own (each keeping what its rank freed) and give large blocks back to the kernel
// on every free (a page fault per 4 KiB when they come back). As many arenas as cores, and freed
// blocks kept for reuse, cost less CPU and less memory.
void keep_freed_memory(int cores) {
  ::mallopt(M_ARENA_MAX, cores);
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// The cores this process may run on.
int host_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1U, std::thread::hardware_concurrency());
}

// The experiment file's functions, one rank at a time: a Lua state is not to be entered by two
// threads at once.
class OneAtATime : public RunCallbacks {
 public:
  explicit OneAtATime(RunCallbacks& inner) : inner_(inner) {}
  bool has(const std::string& name) const override { return inner_.has(name); }
  double learning_rate(std::int64_t epoch, std::int64_t step) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return inner_.learning_rate(epoch, step);
  }
  double step_function(const std::string& id, std::int64_t epoch, std::int64_t step) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return inner_.step_function(id, epoch, step);
  }
  bool on_epoch_end(std::int64_t epoch, const std::map<std::string, double>& metrics) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return inner_.on_epoch_end(epoch, metrics);
  }

 private:
  RunCallbacks& inner_;
  std::mutex mutex_;
};

// What the ranks share while they train, and the first failure among them.
class Ranks {
 public:
  Ranks(const RunConfig& config, RunCallbacks* callbacks, const ThreadRanksReport& report, int world)
      : config_(config),
        report_(report),
        network_(world, std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout * 1000))) {
    if (callbacks) callbacks_.emplace(*callbacks);
  }

  // One rank's thread: the worker loop (or the server's) on the rank's parts.
  void train(int rank, train::WorkerParts parts) {
    try {
      set_rank_clock(RankClockKind::ThreadCpu);
      set_compute_gate(&gate_);
      comm::MemoryCommunicator comm(network_, rank);
      parts.liveness = &report_.liveness[static_cast<std::size_t>(rank)];
      RunCallbacks* callbacks = callbacks_ ? &*callbacks_ : nullptr;
      train::run_rank(config_, std::move(parts), comm, report_.sink, rank == 0 ? report_.progress : nullptr, callbacks);
    } catch (...) {
      fail(rank, std::current_exception());
    }
  }

  void rethrow_first_failure() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  // Keeps the failure that caused the others (a rank's own error, not the CommError of a rank
  // that stopped waiting for it) and stops every wait.
  void fail(int rank, std::exception_ptr error) {
    std::string why;
    bool consequence = false;
    try {
      std::rethrow_exception(error);
    } catch (const CommError& e) {
      why = e.what();
      consequence = true;
    } catch (const std::exception& e) {
      why = e.what();
    } catch (...) {
      why = "an unknown error";
    }
    {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!first_ || (first_is_consequence_ && !consequence)) {
        first_ = error;
        first_is_consequence_ = consequence;
      }
    }
    network_.abort(str_cat("rank ", rank, " failed: ", why));
  }

  const RunConfig& config_;
  const ThreadRanksReport& report_;
  comm::MemoryNetwork network_;
  ComputeGate gate_{host_cores()};
  std::optional<OneAtATime> callbacks_;
  std::mutex failure_mutex_;
  std::exception_ptr first_;
  bool first_is_consequence_ = false;
};

}  // namespace

void train_thread_ranks(const EngineCatalog& catalog, const RunConfig& config, RunCallbacks* callbacks,
                        const ThreadRanksReport& report) {
  const int world = catalog.world_size(config);
  keep_freed_memory(host_cores());
  LACONIC_ENFORCE(static_cast<int>(report.liveness.size()) == world, "thread ranks: ", report.liveness.size(),
                  " liveness records for ", world, " ranks");
  // Every replica is built before any trains: LibTorch's generator is the process's, and each
  // replica must come from the run's seed alone (and the others' training must not draw from it).
  std::vector<train::WorkerParts> parts(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) parts[static_cast<std::size_t>(r)] = catalog.build(config, r);
  Ranks ranks(config, callbacks, report, world);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&ranks, &parts, r] { ranks.train(r, std::move(parts[static_cast<std::size_t>(r)])); });
  for (auto& t : threads) t.join();
  ranks.rethrow_first_failure();
}

}  // namespace laconic::engine
