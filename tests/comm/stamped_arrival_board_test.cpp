// Waiting measured across hosts: clock offsets estimated at rendezvous, arrivals as stamps beside
// the exchange's messages (engine/comm/stamped_arrival_board.hpp). Hosts are played by clocks
// that read seconds apart on ranks of one process.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "engine/comm/memory_communicator.hpp"
#include "engine/comm/shared_arrival_board.hpp"
#include "engine/comm/stamped_arrival_board.hpp"
#include "engine/core/rank_clock.hpp"
#include "rank_threads.hpp"

using laconic::comm::AllreduceAlgorithm;
using laconic::comm::ClockSync;
using laconic::comm::Communicator;
using laconic::testing::run_ranks;
using namespace std::chrono_literals;

namespace {

/// Rank r's clock: the host's, `r` x 10 s ahead (hosts booted at different times).
std::function<double()> skewed_clock(int rank) {
  return [rank] { return laconic::rank_seconds() + 10.0 * rank; };
}

/// One exchange of `kind` (an allreduce algorithm, or -1: allgatherv) over `comm`.
void collective(Communicator& comm, int kind) {
  if (kind < 0) {
    const std::vector<std::uint8_t> mine(static_cast<std::size_t>(comm.rank() + 1), 7);
    REQUIRE(comm.allgatherv(mine).size() == static_cast<std::size_t>(comm.size()));
    return;
  }
  std::vector<float> data(100, 1.0f);
  comm.allreduce_sum(data, static_cast<AllreduceAlgorithm>(kind));
  REQUIRE(data[0] == static_cast<float>(comm.size()));
}

/// Rank 2 arrives 80 ms after the others at each of 5 exchanges of `kind`, on clocks 10 s apart,
/// the offsets estimated again every 2 exchanges; returns each rank's waits and the worst error.
struct Waits {
  std::vector<double> last;
  std::vector<double> errors;
  std::vector<std::uint64_t> messages;
};
void measure_waits(Communicator& comm, int kind, Waits& out) {
  const auto clock = skewed_clock(comm.rank());
  laconic::comm::StampedArrivalBoard board(comm, clock, 2);
  REQUIRE(board.on_shared_clock());
  const auto r = static_cast<std::size_t>(comm.rank());
  for (int exchange = 0; exchange < 5; ++exchange) {
    if (comm.rank() == 2) std::this_thread::sleep_for(80ms);
    const double arrival = clock();
    board.arrive(arrival);
    const auto before = comm.counters();
    collective(comm, kind);
    out.messages[r] = comm.counters().since(before).messages;
    out.last[r] = board.latest() - arrival;
    out.errors[r] = std::max(out.errors[r], board.sync().worst_error);
  }
  // The run's worst: the largest of the rendezvous's estimate and the two estimates after it.
  REQUIRE(board.worst_error() == out.errors[r]);
}

}  // namespace

TEST_CASE("clock offsets are estimated from ping-pongs with rank 0, within their error", "[comm][arrivals]") {
  const int p = 3;
  std::vector<ClockSync> syncs(p);
  run_ranks(p, 20s, [&](Communicator& comm) {
    const auto before = comm.counters();
    syncs[static_cast<std::size_t>(comm.rank())] = comm.synchronize_clock(skewed_clock(comm.rank()));
    // Measurement, not the method's bytes.
    REQUIRE(comm.counters().since(before).messages == 0);
    REQUIRE(comm.counters().since(before).sent == 0);
  });
  REQUIRE(syncs[0].offset == 0.0);
  REQUIRE(syncs[0].error == 0.0);
  for (int r = 1; r < p; ++r) {
    const ClockSync& s = syncs[static_cast<std::size_t>(r)];
    INFO("rank " << r << ": offset " << s.offset << " +- " << s.error);
    REQUIRE(s.error > 0.0);
    REQUIRE(s.error < 0.05);  // half a round trip on loopback
    // Rank 0's clock reads 10 r seconds less: the true offset lies within the bound.
    REQUIRE(std::abs(s.offset - (-10.0 * r)) <= s.error + 1e-6);
    REQUIRE(s.worst_error == s.error);
  }
  REQUIRE(syncs[0].worst_error == std::max(syncs[1].error, syncs[2].error));
}

TEST_CASE("ranks on several hosts measure their wait from stamps beside the exchange's messages", "[comm][arrivals]") {
  // Every collective whose result depends on every rank's input carries the latest arrival to all
  // ranks: the ring, halving-doubling (3 ranks: one folds in), the one-shot exchange, allgatherv.
  const int p = 3;
  const auto kind =
      GENERATE(static_cast<int>(AllreduceAlgorithm::Ring), static_cast<int>(AllreduceAlgorithm::HalvingDoubling),
               static_cast<int>(AllreduceAlgorithm::OneShot), -1);
  INFO("collective " << kind);
  Waits waits{std::vector<double>(p, -1), std::vector<double>(p, 0), std::vector<std::uint64_t>(p, 0)};
  std::vector<std::uint64_t> plain(p, 0);
  run_ranks(p, 20s, [&](Communicator& comm) {
    const auto before = comm.counters();
    collective(comm, kind);  // the same collective without stamps: its messages
    plain[static_cast<std::size_t>(comm.rank())] = comm.counters().since(before).messages;
    measure_waits(comm, kind, waits);
  });
  const double error = waits.errors[0];
  INFO("worst offset error " << error);
  // The others waited 80 ms for rank 2 (less the offsets' error); rank 2 waited for no one.
  REQUIRE(waits.last[0] > 0.08 - 2 * error - 0.005);
  REQUIRE(waits.last[1] > 0.08 - 2 * error - 0.005);
  REQUIRE(waits.last[0] < 1.0);
  REQUIRE(waits.last[2] <= 2 * error);
  // The stamps are not counted: the collective's own messages only.
  REQUIRE(waits.messages == plain);
}

TEST_CASE("a transport without stamps of its own sends them after each message", "[comm][arrivals]") {
  // MemoryCommunicator keeps the Communicator's transfer_stamped: the stamps as second messages.
  const int p = 3;
  laconic::comm::MemoryNetwork network(p, 20s);
  Waits waits{std::vector<double>(p, -1), std::vector<double>(p, 0), std::vector<std::uint64_t>(p, 0)};
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(p);
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        laconic::comm::MemoryCommunicator comm(network, r);
        measure_waits(comm, static_cast<int>(AllreduceAlgorithm::Ring), waits);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        network.abort("a rank failed");
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  REQUIRE(waits.last[0] > 0.08 - 2 * waits.errors[0] - 0.005);
  REQUIRE(waits.last[2] <= 2 * waits.errors[0]);
  for (auto m : waits.messages) REQUIRE(m == 4);
}

TEST_CASE("Gloo ranks stamp arrivals when rank 0 is asked to, estimating offsets at rendezvous", "[comm][arrivals]") {
  // Rank 0's option decides for all: asked on rank 0 only, every rank stamps; asked on rank 1
  // only, every rank of this host shares a board.
  for (int asked : {0, 1}) {
    INFO("stamps asked for on rank " << asked);
    run_ranks(
        2, 20s,
        [&](Communicator& comm) {
          auto& gloo = dynamic_cast<laconic::comm::GlooCommunicator&>(comm);
          REQUIRE(gloo.arrivals() != nullptr);
          REQUIRE(gloo.arrivals()->on_shared_clock());
          if (asked == 1) {
            REQUIRE(dynamic_cast<laconic::comm::SharedArrivalBoard*>(gloo.arrivals()) != nullptr);
            REQUIRE(gloo.stamped_arrivals() == nullptr);
            return;
          }
          REQUIRE(dynamic_cast<laconic::comm::StampedArrivalBoard*>(gloo.arrivals()) != nullptr);
          REQUIRE(gloo.stamped_arrivals() != nullptr);
          REQUIRE(gloo.stamped_arrivals()->sync().worst_error < 0.05);
          // One host, one clock: the estimate's offset is within its error of none.
          REQUIRE(std::abs(gloo.stamped_arrivals()->sync().offset) <= gloo.stamped_arrivals()->sync().error + 1e-6);
        },
        true, [&](laconic::comm::GlooOptions& options) { options.stamped_arrivals = options.rank == asked; });
  }
}
