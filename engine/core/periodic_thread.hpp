#pragma once
// A thread of its own that calls `tick` at once and then every `period` until the object is
// destroyed: the destructor wakes it and joins it, so `tick` never runs after. `tick` runs with
// no lock held here; what it shares with other threads it guards itself. Declare it last among
// its owner's members, so that it starts once everything `tick` uses exists and stops first.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace laconic {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds period, std::function<void()> tick)
      : period_(period), tick_(std::move(tick)), thread_([this] { loop(); }) {}
  ~PeriodicThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      lock.unlock();
      tick_();
      lock.lock();
      wake_.wait_for(lock, period_, [this] { return stop_; });
    }
  }

  std::chrono::milliseconds period_;
  std::function<void()> tick_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace laconic
