// The TCP store (engine/rendezvous_store.hpp) as an elastic run uses it: asked whether a key is set
// without waiting, from two threads at once (a rank's main thread and its failure watch).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "engine/rendezvous_store.hpp"
#include "free_port.hpp"

using namespace laconic;
using laconic::testing::free_port;
using namespace std::chrono_literals;

TEST_CASE("a TCP store says at once whether a key is set, from two threads at once", "[engine][store]") {
  const auto address = comm::StoreAddress::parse("tcp://127.0.0.1:" + std::to_string(free_port()));
  auto server = engine::open_store(address, engine::StoreRole::Server, 10s);
  auto client = engine::open_store(address, engine::StoreRole::Client, 10s);
  // A check that waited (c10d's wait takes a timeout of 0 for none) would never return here.
  auto unset = std::async(std::launch::async, [&] { return client->check("never/set"); });
  REQUIRE(unset.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(unset.get());
  server->set("set", {'1'});
  // Another thread checks while this one sets and gets: each answer whole, none crossed.
  std::atomic<bool> done{false};
  auto checks = std::async(std::launch::async, [&] {
    int seen = 0;
    while (!done) seen += client->check("set") && !client->check("never/set") ? 1 : 0;
    return seen;
  });
  for (int i = 0; i < 200; ++i) {
    client->set("k" + std::to_string(i), {static_cast<char>('a' + i % 26)});
    CHECK(client->get("k" + std::to_string(i), 1s) == std::vector<char>{static_cast<char>('a' + i % 26)});
  }
  done = true;
  CHECK(checks.get() > 0);
}
