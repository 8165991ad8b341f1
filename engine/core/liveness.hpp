#pragma once
// How a rank shows the controller it is alive and getting somewhere: the phase it is in and when
// its main thread last made progress (a step, an evaluation batch, a checkpoint written). A
// thread of the worker process reads it and sends it on the pipe every second, so a rank that is
// frozen (stopped, swapped out, deadlocked outside a collective) falls silent or reports a
// growing quiet time, and the controller can call it hung.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace laconic {

/// The phase an elastic run's rank is in while its group changes (engine/train/elastic_steps.cpp).
/// One of its waits, worker 0's for the members' reports, may last twice the run's timeout
/// (engine/comm/elastic.hpp); the controller allows it that long.
inline constexpr const char* kRegroupingPhase = "regrouping";

class Liveness {
 public:
  Liveness() { tick(); }
  /// Enters a phase ("starting", "rendezvous", "loading", "training", "evaluating",
  /// "checkpointing", "finishing"; a string literal) and marks progress. Main thread only.
  void enter(const char* phase) {
    account(now_ns());
    phase_.store(phase, std::memory_order_relaxed);
    tick();
  }
  /// Seconds the main thread spent in each phase so far, the current one up to now, in the order
  /// the phases were first entered (the per-run overhead breakdown, docs/schema.md). Main thread
  /// only.
  std::vector<std::pair<std::string, double>> phase_seconds() {
    account(now_ns());
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [phase, ns] : spent_) out.emplace_back(phase, static_cast<double>(ns) * 1e-9);
    return out;
  }
  /// Marks progress in the current phase.
  void tick() { last_ns_.store(now_ns(), std::memory_order_relaxed); }
  const char* phase() const { return phase_.load(std::memory_order_relaxed); }
  /// Seconds since the last progress.
  double quiet_seconds() const {
    return static_cast<double>(now_ns() - last_ns_.load(std::memory_order_relaxed)) * 1e-9;
  }

 private:
  // Adds the time since the last accounting to the current phase.
  void account(std::int64_t now) {
    const char* current = phase_.load(std::memory_order_relaxed);
    std::size_t i = 0;
    while (i < spent_.size() && spent_[i].first != current) ++i;
    if (i == spent_.size()) spent_.emplace_back(current, 0);
    spent_[i].second += now - accounted_ns_;
    accounted_ns_ = now;
  }
  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::atomic<const char*> phase_{"starting"};
  std::atomic<std::int64_t> last_ns_{0};
  // The main thread's alone (the heartbeat thread reads only the atomics above).
  std::int64_t accounted_ns_ = now_ns();
  std::vector<std::pair<std::string, std::int64_t>> spent_;
};

/// The Liveness of a rank nobody watches (one trained without a controller: tests, benchmarks),
/// one per thread, so that the training loop never asks whether it is watched.
inline Liveness& unwatched_liveness() {
  thread_local Liveness liveness;
  return liveness;
}

}  // namespace laconic
