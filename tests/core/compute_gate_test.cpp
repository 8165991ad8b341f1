#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "engine/core/compute_gate.hpp"

using laconic::ComputeGate;
using laconic::ComputeSlot;
using laconic::set_compute_gate;

namespace {

// What the threads share; owned jointly, so that threads left behind by a failed check do not
// outlive it.
struct Contended {
  explicit Contended(int slots) : gate(slots) {}
  ComputeGate gate;
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  std::atomic<int> threads_done{0};
};

}  // namespace

TEST_CASE("the compute gate lets at most its slots in at once and wakes every waiter", "[core][compute_gate]") {
  // Many more threads than slots, each entering and leaving in a tight loop: a lost wake-up
  // (libstdc++ 12's counting_semaphore had one) leaves a thread asleep with a slot free.
  constexpr int kSlots = 2, kThreads = 8, kRounds = 20000;
  auto shared = std::make_shared<Contended>(kSlots);
  std::promise<void> all_done;
  auto done = all_done.get_future();
  auto finished = std::make_shared<std::promise<void>>(std::move(all_done));
  for (int t = 0; t < kThreads; ++t)
    std::thread([shared, finished] {
      set_compute_gate(&shared->gate);
      for (int i = 0; i < kRounds; ++i) {
        const ComputeSlot slot;
        const int now = ++shared->inside;
        int most = shared->most_inside.load();
        while (now > most && !shared->most_inside.compare_exchange_weak(most, now)) {}
        --shared->inside;
      }
      if (++shared->threads_done == kThreads) finished->set_value();
    }).detach();
  REQUIRE(done.wait_for(std::chrono::seconds(120)) == std::future_status::ready);
  CHECK(shared->most_inside.load() <= kSlots);
  CHECK(shared->most_inside.load() >= 1);
}
