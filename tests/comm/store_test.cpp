// The rendezvous stores' contract (engine/comm/store.hpp): addresses parsed or refused with the
// forms that work, a key set again takes its new value, every wait ends by its timeout with the
// missing keys named, prefixes keep runs apart; and Gloo's full mesh forms through it.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/comm/store.hpp"
#include "engine/core/error.hpp"
#include "rank_threads.hpp"

using namespace laconic;
using namespace std::chrono_literals;

TEST_CASE("store addresses are parsed, and a malformed one names the forms that work", "[comm][store]") {
  const auto tcp = comm::StoreAddress::parse("tcp://10.0.0.1:29500");
  CHECK(tcp.kind == comm::StoreAddress::Kind::Tcp);
  CHECK(tcp.host == "10.0.0.1");
  CHECK(tcp.port == 29500);
  CHECK(comm::StoreAddress::parse("redis://store.example:6379").text() == "redis://store.example:6379");
  CHECK(comm::StoreAddress::parse("file:///shared/rdzv").path == "/shared/rdzv");
  CHECK(comm::StoreAddress::parse("/tmp/laconic-store-1").text() == "file:///tmp/laconic-store-1");
  CHECK(comm::StoreAddress::parse("relative/dir").text() == "relative/dir");
  CHECK(comm::StoreAddress::parse("tcp://[::1]:29500").host == "::1");
  for (const char* bad :
       {"tcp://host", "tcp://host:0", "tcp://host:70000", "tcp://:29500", "http://x:1", "file://relative", ""})
    CHECK_THROWS_WITH(comm::StoreAddress::parse(bad),
                      Catch::Contains("file:///DIR, tcp://HOST:PORT, redis://HOST:PORT"));
}

TEST_CASE("a file store sets, overwrites and waits with a bound", "[comm][store]") {
  const std::string dir = testing::make_temp_dir();
  auto store = comm::open_file_store(dir + "/nested");  // created when missing
  store->set("run-1/rank_0", {'a', 'b'});
  CHECK(store->get("run-1/rank_0", 1s) == std::vector<char>{'a', 'b'});
  store->set("run-1/rank_0", {'c'});
  CHECK(store->get("run-1/rank_0", 1s) == std::vector<char>{'c'});
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(store->wait({"run-1/rank_0", "run-1/rank_1"}, 200ms),
                    Catch::Contains("'run-1/rank_1'") && Catch::Contains("not all set within 200 ms"));
  CHECK(std::chrono::steady_clock::now() - started >= 200ms);
  // A key set by another thread while one waits for it.
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    store->set("late", {'x'});
  });
  CHECK(store->get("late", 5s) == std::vector<char>{'x'});
  late.join();
  std::filesystem::remove_all(dir);
}

TEST_CASE("prefixed views of one store keep their keys apart", "[comm][store]") {
  const std::string dir = testing::make_temp_dir();
  std::shared_ptr<comm::KeyValueStore> shared = comm::open_file_store(dir);
  auto one = comm::prefixed(shared, "run-1/"), two = comm::prefixed(shared, "run-2/");
  one->set("rank_0", {'1'});
  two->set("rank_0", {'2'});
  CHECK(one->get("rank_0", 1s) == std::vector<char>{'1'});
  CHECK(two->get("rank_0", 1s) == std::vector<char>{'2'});
  CHECK(shared->get("run-2/rank_0", 1s) == std::vector<char>{'2'});
  CHECK_THROWS_AS(comm::prefixed(shared, "run-3/")->wait({"rank_0"}, 50ms), CommError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unreachable Redis store is a communication error that names it", "[comm][store]") {
  // Port 1 on loopback: nothing listens there.
  CHECK_THROWS_WITH(comm::open_redis_store("127.0.0.1", 1, 500ms),
                    Catch::Contains("cannot reach the Redis store at 127.0.0.1:1"));
}

TEST_CASE("three ranks connect their full mesh through a prefixed store and exchange bytes",
          "[comm][store][multirank]") {
  const std::string dir = testing::make_temp_dir();
  std::shared_ptr<comm::KeyValueStore> shared = comm::open_file_store(dir);
  std::vector<float> sums(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      comm::GlooOptions options;
      options.rank = r;
      options.size = 3;
      options.store = comm::prefixed(shared, "sweep-7/run-2/");
      options.timeout = 30s;
      comm::GlooCommunicator communicator(options);
      std::vector<float> v{static_cast<float>(r + 1)};
      communicator.allreduce_sum(v);
      sums[static_cast<std::size_t>(r)] = v[0];
      communicator.barrier();
    });
  for (auto& t : threads) t.join();
  CHECK(sums == std::vector<float>{6, 6, 6});
  std::filesystem::remove_all(dir);
}
