#pragma once
// How a rank shows the controller it is alive and getting somewhere: the phase it is in and when
// its main thread last made progress (a step, an evaluation batch, a checkpoint written). A
// thread of the worker process reads it and sends it on the pipe every second, so a rank that is
// frozen (stopped, swapped out, deadlocked outside a collective) falls silent or reports a
// growing quiet time, and the controller can call it hung.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace laconic {

class Liveness {
 public:
  Liveness() { tick(); }
  /// Enters a phase ("starting", "rendezvous", "training", "evaluating", "checkpointing",
  /// "finishing"; a string literal) and marks progress.
  void enter(const char* phase) {
    phase_.store(phase, std::memory_order_relaxed);
    tick();
  }
  /// Marks progress in the current phase.
  void tick() { last_ns_.store(now_ns(), std::memory_order_relaxed); }
  const char* phase() const { return phase_.load(std::memory_order_relaxed); }
  /// Seconds since the last progress.
  double quiet_seconds() const {
    return static_cast<double>(now_ns() - last_ns_.load(std::memory_order_relaxed)) * 1e-9;
  }

 private:
  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::atomic<const char*> phase_{"starting"};
  std::atomic<std::int64_t> last_ns_{0};
};

}  // namespace laconic
