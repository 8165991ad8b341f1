// The threads `laconic ui` answers on (ui/connection_pool.hpp): every connection waiting gets a
// thread of its own while fewer than the cap exist, so connections that hold theirs (half a
// request, a slow reader) never keep another from being served; one address holds at most its
// share of them.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "ui/connection_pool.hpp"

using namespace laconic::ui;

namespace {

// Connections that hold their thread until released, counting how many are being served at once.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  int inside = 0;
  bool open = false;

  void hold() {
    std::unique_lock<std::mutex> lock(mutex);
    ++inside;
    changed.notify_all();
    changed.wait_for(lock, std::chrono::seconds(10), [this] { return open; });
    --inside;
  }
  bool wait_inside(int n) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return inside >= n; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    changed.notify_all();
  }
};

}  // namespace

TEST_CASE("every waiting connection is served at once while the pool is under its cap", "[ui][pool]") {
  ConnectionPool pool(64, 64);
  Gate gate;
  // Enqueued back to back, as httplib's accept loop does: none may wait for another to finish.
  for (int i = 0; i < 40; ++i) pool.enqueue([&] { gate.hold(); });
  CHECK(gate.wait_inside(40));
  CHECK(pool.threads() == 40);
  gate.release();
  pool.shutdown();
}

TEST_CASE("beyond its cap connections wait their turn, and all are served", "[ui][pool]") {
  ConnectionPool pool(4, 64);
  Gate gate;
  std::atomic<int> done{0};
  for (int i = 0; i < 10; ++i) pool.enqueue([&] {
      gate.hold();
      ++done;
    });
  CHECK(gate.wait_inside(4));
  CHECK(pool.threads() == 4);
  gate.release();
  pool.shutdown();
  CHECK(done == 10);
}

TEST_CASE("one address holds at most its share of the connections being served", "[ui][pool]") {
  ConnectionPool pool(16, 2);
  Gate gate;
  std::atomic<int> admitted{0}, refused{0};
  const auto connection = [&](const std::string& address) {
    return [&, address] {
      if (pool.admit(address)) {
        ++admitted;
        CHECK(pool.admit(address));  // its later requests: the same connection, admitted already
      } else {
        ++refused;
      }
      gate.hold();
    };
  };
  for (int i = 0; i < 3; ++i) pool.enqueue(connection("10.0.0.1"));
  pool.enqueue(connection("10.0.0.2"));
  CHECK(gate.wait_inside(4));
  CHECK(admitted == 3);  // two of the first address, and the other address's
  CHECK(refused == 1);
  gate.release();
  pool.shutdown();
}

TEST_CASE("a connection that closed frees its address's share", "[ui][pool]") {
  ConnectionPool pool(4, 1);
  std::atomic<int> admitted{0};
  for (int i = 0; i < 3; ++i) {
    pool.enqueue([&] { admitted += pool.admit("10.0.0.1") ? 1 : 0; });
    for (int wait = 0; wait < 1000 && admitted < i + 1; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pool.shutdown();
  CHECK(admitted == 3);
}
