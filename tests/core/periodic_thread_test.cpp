// PeriodicThread (engine/core/periodic_thread.hpp): its first tick at once, then one a period,
// and none once it is destroyed, even with a long period (the destructor wakes it).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/core/periodic_thread.hpp"

using namespace std::chrono_literals;

TEST_CASE("a periodic thread ticks at once, then every period, and never after it is destroyed", "[core]") {
  std::atomic<int> ticks{0};
  {
    laconic::PeriodicThread thread(2ms, [&] { ++ticks; });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (ticks < 5 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  }
  const int seen = ticks;
  CHECK(seen >= 5);
  std::this_thread::sleep_for(20ms);
  CHECK(ticks == seen);

  std::atomic<int> slow{0};
  const auto start = std::chrono::steady_clock::now();
  {
    laconic::PeriodicThread thread(1h, [&] { ++slow; });
    const auto deadline = start + 10s;
    while (slow < 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  }
  CHECK(slow == 1);
  CHECK(std::chrono::steady_clock::now() - start < 10s);  // woken, not waited out
}
