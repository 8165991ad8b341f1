// Islands (network = cluster { }): which messages the communicator counts on the links between
// islands, collective by collective (a phase in which any rank's message crosses costs every rank
// the slow link), and the cluster's projection of them, against the link's own formula.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include "engine/comm/memory_communicator.hpp"
#include "engine/comm/network.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::comm;
using namespace std::chrono_literals;

namespace {

// Each rank's counters after `fn` on p thread ranks over memory with `islands`.
std::vector<ByteCounters> counted(const std::vector<int>& islands, const std::function<void(Communicator&)>& fn) {
  const int p = static_cast<int>(islands.size());
  MemoryNetwork network(p, 20s);
  std::vector<ByteCounters> out(islands.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      MemoryCommunicator comm(network, r);
      comm.set_islands(islands);
      fn(comm);
      out[static_cast<std::size_t>(r)] = comm.counters();
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

TEST_CASE("a ring over islands crosses at every phase, one message per island at a time: every rank's messages count "
          "on the link between",
          "[comm][islands]") {
  std::vector<float> data(4000, 1.0f);
  for (const std::vector<int>& islands : {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 0, 1, 1, 1}}) {
    const auto counters = counted(islands, [&](Communicator& c) {
      auto mine = data;
      c.allreduce_sum(mine, AllreduceAlgorithm::Ring);
    });
    for (const ByteCounters& c : counters) {
      CHECK(c.messages == 2 * (islands.size() - 1));
      CHECK(c.between_messages == c.messages);
      CHECK(c.between_link_bytes == c.link_bytes);
      CHECK(c.between_shared_bytes == c.link_bytes);  // one message out of each island at a time
    }
  }
  // One island: nothing between.
  const auto alone = counted({0, 0, 0, 0}, [&](Communicator& c) {
    auto mine = data;
    c.allreduce_sum(mine, AllreduceAlgorithm::Ring);
  });
  for (const ByteCounters& c : alone) CHECK(c.between_messages == 0);
}

TEST_CASE("halving-doubling over 2 x 2 crosses only at the steps whose partners sit in the other island",
          "[comm][islands]") {
  std::vector<float> data(4096, 1.0f);
  const auto counters = counted({0, 0, 1, 1}, [&](Communicator& c) {
    auto mine = data;
    c.allreduce_sum(mine, AllreduceAlgorithm::HalvingDoubling);
  });
  // Halving: the partner at rank distance 2 (the other island, 2048 floats), then 1 (inside,
  // 1024); doubling back: distance 1 (inside, 1024), then 2 (between, 2048). At distance 2 both
  // ranks of an island send to the other at once: the link between carries twice the bytes.
  for (const ByteCounters& c : counters) {
    CHECK(c.messages == 4);
    CHECK(c.link_bytes == 2 * 2048 * 4 + 2 * 1024 * 4);
    CHECK(c.between_messages == 2);
    CHECK(c.between_link_bytes == 2 * 2048 * 4);
    CHECK(c.between_shared_bytes == 2 * (2 * 2048 * 4));
  }
}

TEST_CASE("outside a collective a message is between islands when its own peer is in another island",
          "[comm][islands]") {
  const auto counters = counted({0, 0, 1, 1}, [](Communicator& c) {
    std::uint8_t out = 1, in = 0;
    if (c.rank() == 0) {
      c.send_recv(1, {&out, 1}, -1, {});
      c.send_recv(2, {&out, 1}, -1, {});
    } else if (c.rank() == 1 || c.rank() == 2) {
      c.send_recv(-1, {}, 0, {&in, 1});
    }
  });
  CHECK(counters[0].messages == 2);
  CHECK(counters[0].between_messages == 1);
  CHECK(counters[1].between_messages == 0);
  CHECK(counters[2].between_messages == 1);
  CHECK(counters[3].messages == 0);
}

TEST_CASE("a cluster projects inside and between messages each on its link; its islands must hold the ranks",
          "[comm][islands][network]") {
  const auto cluster = builtin_networks().create(
      {"network",
       "cluster",
       {{"islands", std::vector<std::int64_t>{2, 2}},
        {"inside", nested({"network", "link", {{"bandwidth", std::string("10Gbit")}, {"latency", std::string("5us")}}})},
        {"between",
         nested({"network", "link", {{"bandwidth", std::string("100Mbit")}, {"latency", std::string("1ms")}}})}}});
  ByteCounters delta;
  delta.messages = 6;
  delta.link_bytes = 6000000;
  delta.between_messages = 2;
  delta.between_link_bytes = 1000000;
  delta.between_shared_bytes = 2000000;  // two ranks' messages on the island's link at once
  const LinkSpec inside = parse_link("10Gbit,5us"), between = parse_link("100Mbit,1ms");
  CHECK(cluster->project(delta) == Approx(inside.project(4, 5000000) + between.project(2, 2000000)));
  CHECK_FALSE(cluster->link().has_value());  // not one link
  CHECK(cluster->islands(4) == std::vector<int>{0, 0, 1, 1});
  CHECK_THROWS_WITH(cluster->islands(5), Catch::Contains("holds 4 ranks, the run has 5"));
  CHECK_THROWS_WITH(builtin_networks().create({"network", "cluster", {}}),
                    Catch::Contains("cluster.islands must list the ranks of each island"));
  CHECK_THROWS_WITH(
      builtin_networks().create(
          {"network",
           "cluster",
           {{"islands", std::vector<std::int64_t>{2, 2}},
            {"between", nested({"network", "link", {{"emulate", true}}})}}}),
      Catch::Contains("a cluster is emulated as a whole, with cluster { emulate = true"));
  // A link's own projection is unchanged by the counters of islands.
  const auto link = builtin_networks().create({"network", "link", {}});
  CHECK(link->islands(4).empty());
}

TEST_CASE("the hierarchical allreduce sums over islands, sends each island's sum between once, spread over its ranks",
          "[comm][islands][hierarchical]") {
  for (const std::vector<int>& islands :
       {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 0, 1, 1, 1}, std::vector<int>{0, 0, 1, 1, 2, 2}}) {
    const int p = static_cast<int>(islands.size()), m = islands.back() + 1, k = p / m;
    INFO("p=" << p << " islands=" << m);
    const std::size_t n = 3001;
    std::vector<std::vector<float>> results(islands.size());
    const auto counters = counted(islands, [&](Communicator& c) {
      std::vector<float> mine(n);
      for (std::size_t i = 0; i < n; ++i) mine[i] = static_cast<float>((i % 7) + c.rank());  // small integers: exact
      c.allreduce_sum(mine, AllreduceAlgorithm::Hierarchical);
      results[static_cast<std::size_t>(c.rank())] = mine;
    });
    for (std::size_t i = 0; i < n; ++i)
      CHECK(results[0][i] == static_cast<float>(p * (i % 7) + p * (p - 1) / 2));
    for (const auto& r : results) CHECK(r == results[0]);
    for (int r = 0; r < p; ++r) {
      const ByteCounters& c = counters[static_cast<std::size_t>(r)];
      CHECK(c.messages == static_cast<std::uint64_t>(2 * (k - 1) + 2 * (m - 1)));
      CHECK(c.between_messages == static_cast<std::uint64_t>(2 * (m - 1)));
      // Between islands: a ring over m of one chunk of about n / k floats, the island's k ranks
      // each running one at once over its link.
      const double chunk = 4.0 * static_cast<double>(n) / k;
      CHECK(static_cast<double>(c.between_link_bytes) == Approx(2.0 * (m - 1) / m * chunk).epsilon(0.01));
      CHECK(c.between_shared_bytes == static_cast<std::uint64_t>(k) * c.between_link_bytes);
    }
  }
}

TEST_CASE("the hierarchical allreduce applies a narrow format between islands only", "[comm][islands][hierarchical]") {
  // fp32 inside: an island's sum of values that fp16 cannot hold stays exact until it goes between.
  const std::vector<int> islands{0, 0, 1, 1};
  std::vector<std::vector<float>> results(islands.size());
  struct Half : WireCodec {  // a cast to a grid of 1/4: a value off it shows where it was rounded
    std::size_t bytes(std::size_t n) const override { return 4 * n; }
    void encode(std::span<const float> in, std::span<std::uint8_t> out) const override {
      for (std::size_t i = 0; i < in.size(); ++i) {
        const float v = std::round(in[i] * 4) / 4;
        std::memcpy(out.data() + 4 * i, &v, 4);
      }
    }
    void decode(std::span<const std::uint8_t> in, std::span<float> out) const override {
      std::memcpy(out.data(), in.data(), 4 * out.size());
    }
  } quarter;
  counted(islands, [&](Communicator& c) {
    std::vector<float> mine(64, c.rank() % 2 == 0 ? 0.1f : 0.2f);  // each island sums to 0.3
    c.allreduce_sum_encoded(mine, quarter, AllreduceAlgorithm::Hierarchical);
    results[static_cast<std::size_t>(c.rank())] = mine;
  });
  // Each island's 0.3 rounds to 0.25 once it goes between; the two add to 0.5 exactly.
  for (const auto& r : results)
    for (float v : r) CHECK(v == 0.5f);
}

TEST_CASE("an emulated cluster's message delay is the one of the link the message crosses", "[comm][islands]") {
  // Ranks 0 and 1 in one island, 2 in another: a message inside waits 1 ms, one between 60 ms.
  MemoryNetwork network(3, std::chrono::seconds(20));
  std::vector<double> inside(3, 0), between(3, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      MemoryCommunicator comm(network, r);
      comm.set_islands({0, 0, 1});
      comm.set_message_delay(1e-3, 60e-3);
      std::vector<std::uint8_t> byte(1, 7), got(1, 0);
      const auto timed = [&](int to, int from) {
        const auto start = std::chrono::steady_clock::now();
        comm.send_recv(to, byte, from, got);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      // Rank 0 sends inside (to 1), then between (to 2); 1 and 2 answer.
      if (r == 0) inside[0] = timed(1, 1), between[0] = timed(2, 2);
      if (r == 1) inside[1] = timed(0, 0);
      if (r == 2) between[2] = timed(0, 0);
    });
  for (auto& t : threads) t.join();
  CHECK(inside[0] >= 1e-3);
  CHECK(inside[0] < 60e-3);  // not the delay between: the send inside waits 1 ms before it goes
  CHECK(between[0] >= 60e-3);
  CHECK(between[2] >= 60e-3);
}
