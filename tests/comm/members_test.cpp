// The ranks present (Communicator::set_members), the ground that workers leaving and joining
// (issue 68) will stand on: the ring allreduce and the allgathers run around the members alone
// with the bytes of a ring of that many, an absent rank sends and receives nothing, and once every
// rank is back the collectives sum over all of them again, their messages still matched.
#include <catch2/catch.hpp>

#include <thread>

#include "engine/comm/memory_communicator.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::comm;

namespace {

// Rank r's vector: element i is (r + 1) x (i + 1), so a sum names the ranks in it.
std::vector<float> of_rank(int r, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((r + 1) * (i + 1));
  return v;
}

}  // namespace

TEST_CASE("with a rank absent the ring sums over the members alone, then over all once it is back",
          "[comm][members]") {
  constexpr int kRanks = 4;
  constexpr std::size_t kN = 1001;
  const std::vector<int> members{0, 1, 3};  // rank 2 has left
  MemoryNetwork network(kRanks, std::chrono::seconds(20));
  std::vector<std::vector<float>> partial(kRanks), whole(kRanks);
  std::vector<ByteCounters> during(kRanks);
  std::vector<std::vector<std::vector<std::uint8_t>>> gathered(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      MemoryCommunicator comm(network, r);
      if (r != 2) {
        comm.set_members(members);
        CHECK(comm.present() == 3);
        partial[r] = of_rank(r, kN);
        comm.allreduce_sum(partial[r], AllreduceAlgorithm::HalvingDoubling);  // the members' ring runs
        const std::uint8_t mine = static_cast<std::uint8_t>(10 + r);
        gathered[r] = comm.allgatherv({&mine, 1});
        during[r] = comm.counters();
        comm.set_members({});
      }
      whole[r] = of_rank(r, kN);
      comm.allreduce_sum(whole[r]);
      comm.barrier();
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    for (std::size_t i = 0; i < kN; i += 97) CHECK(whole[r][i] == static_cast<float>((1 + 2 + 3 + 4) * (i + 1)));
    if (r == 2) continue;
    for (std::size_t i = 0; i < kN; i += 97) CHECK(partial[r][i] == static_cast<float>((1 + 2 + 4) * (i + 1)));
    REQUIRE(gathered[r].size() == 3);  // one payload per member, in their order
    CHECK(gathered[r][2] == std::vector<std::uint8_t>{13});
    // A ring of three: its sum's bytes, then the gather's two sizes (8 bytes) and two payloads (1 byte).
    const int position = r == 3 ? 2 : r;
    CHECK(during[r].sent == ring_allreduce_bytes_sent(kN, 3, position) + 2 * 8 + 2 * 1);
  }
}

TEST_CASE("members are refused where they cannot hold", "[comm][members]") {
  MemoryNetwork network(3, std::chrono::seconds(5));
  MemoryCommunicator comm(network, 1);
  CHECK_THROWS_AS(comm.set_members({0, 2}), InvariantError);  // not among them
  CHECK_THROWS_AS(comm.set_members({2, 1}), InvariantError);  // not in rank order
  CHECK_THROWS_AS(comm.set_members({1, 5}), InvariantError);  // outside the world
  comm.set_members({0, 1, 2});                                // everyone: the same as none
  CHECK(comm.members().empty());
  comm.set_members({0, 1});
  std::vector<float> v(8, 1.0f);
  CHECK_THROWS_WITH(comm.allreduce_sum_one_shot(v), Catch::Contains("only the ring runs"));
  CHECK_THROWS_WITH(comm.allreduce_sum_halving_doubling(v), Catch::Contains("only the ring runs"));
}
