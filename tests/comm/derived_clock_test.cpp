// Thread ranks' derived clocks (engine/core/rank_clock.hpp) over a MemoryCommunicator: a message
// carries its sender's clock, and its receiver cannot have it before then, whatever the pattern.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include "engine/comm/memory_communicator.hpp"
#include "engine/core/rank_clock.hpp"

using namespace laconic;
using namespace std::chrono_literals;

namespace {

/// Runs fn(comm) on `p` thread ranks timed on their CPU, each phase starting at origins[rank].
template <class Fn>
std::vector<double> waits_of(int p, const std::vector<double>& origins, Fn fn) {
  comm::MemoryNetwork network(p, 20s);
  std::vector<double> waited(static_cast<std::size_t>(p), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      set_rank_clock(RankClockKind::ThreadCpu);
      comm::MemoryCommunicator comm(network, r);
      begin_phase(origins[static_cast<std::size_t>(r)]);
      fn(comm);
      waited[static_cast<std::size_t>(r)] = phase_waited();
    });
  for (auto& t : threads) t.join();
  return waited;
}

}  // namespace

TEST_CASE("a thread rank that receives from one whose clock is ahead waits until then", "[comm][derived]") {
  // Rank 1 is 1 s ahead: rank 0 waits about 1 s for its message; rank 1 waits for nobody.
  const auto waited = waits_of(2, {0.0, 1.0}, [](comm::Communicator& c) {
    std::vector<std::uint8_t> out(4, 1), in(4);
    c.send_recv(1 - c.rank(), out, 1 - c.rank(), in);
  });
  CHECK(waited[0] == Approx(1.0).margin(0.05));
  CHECK(waited[1] == Approx(0.0).margin(0.05));
}

TEST_CASE("a ring allreduce brings every rank up to the latest one's clock, through the ranks between",
          "[comm][derived]") {
  // Rank 2 of 4 is 0.5 s ahead; in a ring, ranks 0 and 1 hear of it only through the others.
  const auto waited = waits_of(4, {0.0, 0.1, 0.5, 0.2}, [](comm::Communicator& c) {
    std::vector<float> v(64, 1.0f);
    c.allreduce_sum(v, comm::AllreduceAlgorithm::Ring);
  });
  CHECK(waited[0] == Approx(0.5).margin(0.05));
  CHECK(waited[1] == Approx(0.4).margin(0.05));
  CHECK(waited[2] == Approx(0.0).margin(0.05));
  CHECK(waited[3] == Approx(0.3).margin(0.05));
}

TEST_CASE("a server's reply carries the slowest push: every worker waits for it", "[comm][derived]") {
  // Rank 3 serves: it takes a push from each worker, then answers each. Worker 2 is 0.3 s behind
  // the others' 0 only in arriving later: its clock stands at 0.3.
  const auto waited = waits_of(4, {0.0, 0.0, 0.3, 0.0}, [](comm::Communicator& c) {
    std::vector<std::uint8_t> push(8, 1), reply(8);
    if (c.rank() < 3) {
      c.send_recv(3, push, 3, reply);
      return;
    }
    std::vector<std::uint8_t> got(8);
    for (int w = 0; w < 3; ++w) c.send_recv(-1, {}, w, got);
    for (int w = 0; w < 3; ++w) c.send_recv(w, reply, -1, {});
  });
  CHECK(waited[0] == Approx(0.3).margin(0.05));
  CHECK(waited[1] == Approx(0.3).margin(0.05));
  CHECK(waited[2] == Approx(0.0).margin(0.05));
  CHECK(waited[3] == Approx(0.3).margin(0.05));  // the server waited for the last push
}
