// Whether a host reaches another (engine/comm/reachability.hpp): a Beacon answers every
// connection, however many, and one that is not there is not reached, with the reason.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <sstream>
#include <string>

#include "engine/comm/reachability.hpp"
#include "engine/core/error.hpp"
#include "unanswered.hpp"

using namespace laconic;
using namespace std::chrono_literals;

TEST_CASE("a beacon is reached, more often than its listening queue holds", "[comm][reachability]") {
  comm::Beacon beacon(comm::ListenAddress{"127.0.0.1", ""});
  CHECK_THAT(beacon.address(), Catch::StartsWith("127.0.0.1 "));
  std::string why;
  int reached = 0;
  for (int i = 0; i < 200; ++i) reached += comm::reaches(beacon.address(), 2000ms, &why) ? 1 : 0;
  INFO(why);
  CHECK(reached == 200);  // a queue of 64 that nobody accepted would refuse the 65th
}

TEST_CASE("a beacon gone is not reached, and the reason says why", "[comm][reachability]") {
  std::string address;
  { address = comm::Beacon(comm::ListenAddress{"127.0.0.1", ""}).address(); }
  std::string why;
  CHECK_FALSE(comm::reaches(address, 2000ms, &why));
  std::istringstream fields(address);
  std::string host, port;
  fields >> host >> port;
  CHECK(why == "connect to 127.0.0.1 port " + port + ": Connection refused");
  CHECK_FALSE(comm::reaches("not-an-address", 100ms, &why));
  CHECK(why == "'not-an-address' is not a beacon's address");
}

TEST_CASE("a connection nobody answers gives up at its timeout", "[comm][reachability]") {
  const testing::Unanswered nowhere;  // a full queue: the next handshakes go unanswered
  CHECK(nowhere.queued() < 8);        // the queue holds a few at most
  CHECK(nowhere.last_try() ==
        "connect to 127.0.0.1 port " + std::to_string(nowhere.port()) + ": no answer within 300 ms");
}

TEST_CASE("a beacon on an interface that does not exist says so", "[comm][reachability]") {
  CHECK_THROWS_WITH(comm::Beacon(comm::ListenAddress{"", "laconic-none0"}),
                    Catch::StartsWith("beacon: cannot find the address of interface laconic-none0: "));
}
