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
  // Minutes and hours read alike wherever a duration is read (advise's --budget, a link, a timeout).
  CHECK(parse_duration("f", "6m") == 360.0);
  CHECK(parse_duration("f", "15min") == 900.0);
  CHECK(parse_duration("f", "0.5h") == 1800.0);
  CHECK_THROWS_WITH(parse_duration("f", "6mins"), Catch::Contains("units: ns, us, ms, s, m or min, h"));
  CHECK_THROWS_WITH(parse_bandwidth("link.bandwidth", "fast"),
                    Catch::StartsWith("link.bandwidth must be a positive rate") && Catch::EndsWith("got \"fast\""));
  CHECK_THROWS_AS(parse_bandwidth("link.bandwidth", "1Gb"), ConfigError);  // bits or bytes?
  CHECK_THROWS_AS(parse_bandwidth("link.bandwidth", "0Gbit"), ConfigError);
  CHECK_THROWS_WITH(parse_duration("link.latency", "5 parsecs"),
                    Catch::StartsWith("link.latency must be a duration >= 0") && Catch::EndsWith("got \"5 parsecs\""));
}

TEST_CASE("a link projects each message as latency + size / (bandwidth x payload share)", "[comm][network]") {
  auto link = builtin_networks().create(
      {"network", "link", {{"bandwidth", std::string("8Mbit")}, {"latency", std::string("1ms")}}});
  ByteCounters traffic;
  traffic.messages = 3;
  traffic.link_bytes = 2'000'000;  // 16 Mbit at 8 Mbit/s = 2 s of payload, 2 / 0.936 s with TCP's framing
  CHECK(link->project(traffic) == Approx(3 * 1e-3 + 2.0 * 1547.0 / 1448.0));
  auto bare = builtin_networks().create(
      {"network",
       "link",
       {{"bandwidth", std::string("8Mbit")}, {"latency", std::string("1ms")}, {"payload_fraction", 1.0}}});
  CHECK(bare->project(traffic) == Approx(3 * 1e-3 + 2.0));
  CHECK_THROWS_WITH(builtin_networks().create({"network", "link", {{"payload_fraction", 1.5}}}),
                    Catch::Contains("link.payload_fraction must be in (0, 1]"));
  CHECK(link->project(ByteCounters{}) == 0.0);
  CHECK_THROWS_WITH(builtin_networks().create({"network", "link", {{"latency", std::string("x")}}}),
                    Catch::Contains("link.latency must be a duration"));
}

TEST_CASE("the hosts' overhead per message and their own rate limit join the projection", "[comm][network]") {
  ByteCounters traffic;
  traffic.messages = 4;
  traffic.link_bytes = 1'250'000;  // 10 Mbit
  auto fast = builtin_networks().create({"network",
                                         "link",
                                         {{"bandwidth", std::string("10Gbit")},
                                          {"latency", std::string("50us")},
                                          {"overhead", std::string("300us")},
                                          {"host_bandwidth", std::string("2Gbit")}}});
  // The host is the slower: 4 x (50 + 300) us + 10 Mbit / 2 Gbit/s.
  CHECK(fast->project(traffic) == Approx(4 * 350e-6 + 5e-3));
  auto slow = builtin_networks().create({"network",
                                         "link",
                                         {{"bandwidth", std::string("100Mbit")},
                                          {"latency", std::string("50us")},
                                          {"overhead", std::string("300us")},
                                          {"host_bandwidth", std::string("2Gbit")}}});
  // The link is the slower: 10 Mbit / (100 Mbit/s x 0.936).
  CHECK(slow->project(traffic) == Approx(4 * 350e-6 + 0.1 / kTcpPayloadFraction));
  CHECK_THROWS_WITH(builtin_networks().create({"network", "link", {{"host_bandwidth", std::string("3Gb")}}}),
                    Catch::StartsWith("link.host_bandwidth must be a positive rate"));
}

TEST_CASE("--link reads BANDWIDTH[,LATENCY[,OVERHEAD[,HOST_BANDWIDTH]]]", "[comm][network]") {
  const LinkSpec plain = parse_link("100Mbit");
  CHECK(plain.bits_per_second == 1e8);
  CHECK(plain.latency_seconds == Approx(50e-6));
  CHECK(plain.overhead_seconds == 0.0);
  CHECK(plain.host_bits_per_second == 0.0);
  const LinkSpec full = parse_link("10Gbit,20us,300us,3Gbit");
  CHECK(full.bits_per_second == 1e10);
  CHECK(full.latency_seconds == Approx(20e-6));
  CHECK(full.overhead_seconds == Approx(300e-6));
  CHECK(full.host_bits_per_second == 3e9);
  CHECK(full.project(2, 375'000) == Approx(2 * 320e-6 + 1e-3));  // 3 Mbit at the host's 3 Gbit/s
  CHECK(plain.payload_fraction == kTcpPayloadFraction);
  CHECK_THROWS_WITH(parse_link("1Gbit,50us,1us,1Gbit,9"), Catch::StartsWith("--link takes BANDWIDTH[,LATENCY"));
  CHECK_THROWS_WITH(parse_link("1Gbit,50us,soon"), Catch::StartsWith("--link overhead must be a duration"));
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
