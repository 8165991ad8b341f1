#pragma once
// How many of a process's rank threads compute at once. Ranks placed as threads outnumber the
// host's cores; left alone they would all compute at the same time, each holding its forward
// pass's activations and taking turns on the cores. A rank computes only while it holds one of
// as many slots as the host has cores, and never holds one while it waits for another rank, so
// the slots cannot deadlock. Its CPU time, which is what it measures, does not change.
//
// The slots are a count under a mutex, not std::counting_semaphore: libstdc++ 12's semaphore can
// miss a wake-up when one thread releases while another fails to take a slot (GCC bugs 98033 and
// 104928); a rank left asleep there is the likely cause of the thread-rank runs that hung now
// and then with no error (every wait between ranks is bounded; this one was not).
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace laconic {

class ComputeGate {
 public:
  explicit ComputeGate(std::ptrdiff_t slots) : free_(slots) {}
  void enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++free_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::ptrdiff_t free_;
};

namespace compute_gate_detail {
inline ComputeGate*& current() {
  thread_local ComputeGate* gate = nullptr;
  return gate;
}
}  // namespace compute_gate_detail

/// The gate this thread's computing passes (null: none, a rank with a process of its own).
inline void set_compute_gate(ComputeGate* gate) { compute_gate_detail::current() = gate; }

/// Holds a slot of this thread's gate, if it has one, for its lifetime: a rank's pure compute
/// (no waiting on another rank inside).
class ComputeSlot {
 public:
  ComputeSlot() : gate_(compute_gate_detail::current()) {
    if (gate_) gate_->enter();
  }
  ~ComputeSlot() {
    if (gate_) gate_->leave();
  }
  ComputeSlot(const ComputeSlot&) = delete;
  ComputeSlot& operator=(const ComputeSlot&) = delete;

 private:
  ComputeGate* gate_;
};

}  // namespace laconic
