// The network model: unit parsing with errors that name the field, the projection formula, and
// the message pattern the Communicator records for the ring collectives.
#include <catch2/catch.hpp>

#include "engine/comm/network.hpp"
#include "engine/core/error.hpp"
#include "rank_threads.hpp"

using namespace laconic;
using namespace laconic::comm;

TEST_CASE("bandwidths and durations parse with their units", "[comm][network]") {
  CHECK(parse_bandwidth("f", "1Gbit") == 1e9);
  CHECK(parse_bandwidth("f", "100 Mbit/s") == 1e8);
  CHECK(parse_bandwidth("f", "125MB/s") == 1e9);
  CHECK(parse_bandwidth("f", "2.5Gbit") == 2.5e9);
  CHECK(parse_duration("f", "50us") == Approx(50e-6));
  CHECK(parse_duration("f", "0.2 ms") == Approx(0.2e-3));
  CHECK(parse_duration("f", "1s") == 1.0);
  CHECK(parse_duration("f", "0us") == 0.0);
  CHECK_THROWS_WITH(parse_bandwidth("link.bandwidth", "fast"),
                    Catch::StartsWith("link.bandwidth must be a positive rate") &&
                        Catch::EndsWith("got \"fast\""));
  CHECK_THROWS_AS(parse_bandwidth("link.bandwidth", "1Gb"), ConfigError);  // bits or bytes?
  CHECK_THROWS_AS(parse_bandwidth("link.bandwidth", "0Gbit"), ConfigError);
  CHECK_THROWS_WITH(parse_duration("link.latency", "5 parsecs"),
                    Catch::StartsWith("link.latency must be a duration >= 0") &&
                        Catch::EndsWith("got \"5 parsecs\""));
}

TEST_CASE("a link projects each message as latency + size / bandwidth", "[comm][network]") {
  auto link = builtin_networks().create(
      {"network", "link", {{"bandwidth", std::string("8Mbit")}, {"latency", std::string("1ms")}}});
  ByteCounters traffic;
  traffic.messages = 3;
  traffic.link_bytes = 2'000'000;  // 16 Mbit at 8 Mbit/s = 2 s
  CHECK(link->project(traffic) == Approx(3 * 1e-3 + 2.0));
  CHECK(link->project(ByteCounters{}) == 0.0);
  CHECK_THROWS_WITH(builtin_networks().create({"network", "link", {{"latency", std::string("x")}}}),
                    Catch::Contains("link.latency must be a duration"));
}

TEST_CASE("the communicator records the ring's message pattern", "[comm][network]") {
  constexpr int kRanks = 3;
  constexpr std::size_t n = 3000;  // three equal chunks of 1000 floats
  std::vector<ByteCounters> traffic(kRanks);
  testing::run_ranks(kRanks, std::chrono::seconds(30), [&](Communicator& comm) {
    std::vector<float> data(n, 1.0f);
    const ByteCounters before = comm.counters();
    comm.allreduce_sum(data);
    traffic[static_cast<std::size_t>(comm.rank())] = comm.counters().since(before);
  });
  for (const auto& t : traffic) {
    // 2(p-1) rounds, each sending one chunk while receiving another of the same size.
    CHECK(t.messages == 2 * (kRanks - 1));
    CHECK(t.link_bytes == 2 * (kRanks - 1) * 1000 * 4);
    CHECK(t.sent == t.link_bytes);
  }
}
