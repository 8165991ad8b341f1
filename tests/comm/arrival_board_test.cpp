#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/comm/shared_arrival_board.hpp"
#include "engine/core/rank_clock.hpp"
#include "rank_threads.hpp"

using laconic::testing::run_ranks;
using namespace std::chrono_literals;

TEST_CASE("ranks on one host measure their wait on a shared board, without a barrier", "[comm][arrivals]") {
  // Rank 2 arrives 80 ms after the others: they waited for it, it did not wait.
  const int p = 3;
  std::vector<double> waits(p, -1);
  std::vector<std::uint64_t> messages(p, 0);
  run_ranks(p, 20s, [&](laconic::comm::Communicator& comm) {
    laconic::comm::ArrivalBoard* board = comm.arrivals();
    REQUIRE(board != nullptr);  // threads of one process: one host, one boot
    REQUIRE(board->on_shared_clock());
    for (int exchange = 0; exchange < 3; ++exchange) {  // slots are reused by exchange parity
      if (comm.rank() == 2) std::this_thread::sleep_for(80ms);
      const double arrival = laconic::rank_seconds();
      board->arrive(arrival);
      const auto before = comm.counters();
      std::vector<float> data(100, 1.0f);
      comm.allreduce_sum(data);
      messages[static_cast<std::size_t>(comm.rank())] = comm.counters().since(before).messages;
      waits[static_cast<std::size_t>(comm.rank())] = board->latest() - arrival;
      REQUIRE(data[0] == 3.0f);
    }
  });
  REQUIRE(waits[0] > 0.07);
  REQUIRE(waits[1] > 0.07);
  REQUIRE(waits[2] == 0.0);
  // Only the allreduce's own messages: the board added none.
  for (auto m : messages) REQUIRE(m == 4);
}

TEST_CASE("the board's file is gone once the ranks have connected", "[comm][arrivals]") {
  auto boards = [] {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm"))
      if (entry.path().filename().string().rfind("laconic-arrivals-", 0) == 0) ++n;
    return n;
  };
  const std::size_t before = boards();
  run_ranks(2, 20s, [&](laconic::comm::Communicator& comm) {
    REQUIRE(comm.arrivals() != nullptr);
    comm.barrier();  // both connected, so rank 0 has removed the file
    REQUIRE(boards() <= before);
  });
}

TEST_CASE("ranks on different boots fall back to a barrier on every rank", "[comm][arrivals]") {
  // A store in which rank 1 reports another host: rank 0 publishes no board, and rank 1 maps none.
  const std::string dir = laconic::testing::make_temp_dir();
  auto store = laconic::comm::open_file_store(dir);
  store->set("laconic/arrival_board/host/1", {'x'});
  auto setup0 = laconic::comm::open_shared_arrival_board(*store, 0, 2, 5000ms);
  REQUIRE(setup0.board == nullptr);
  REQUIRE(setup0.path.empty());
  auto setup1 = laconic::comm::open_shared_arrival_board(*store, 1, 2, 5000ms);
  REQUIRE(setup1.board == nullptr);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a board left by a rank 0 that no longer runs is removed by the next rendezvous", "[comm][arrivals]") {
  // A pid that ran and is gone: a child that exited and was reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  const std::string orphan = "/dev/shm/laconic-arrivals-" + std::to_string(child) + "-1";
  const std::string alive = "/dev/shm/laconic-arrivals-" + std::to_string(::getpid()) + "-1";
  for (const auto& path : {orphan, alive}) std::ofstream(path) << "board";
  run_ranks(2, 20s, [&](laconic::comm::Communicator& comm) { REQUIRE(comm.arrivals() != nullptr); });
  CHECK_FALSE(std::filesystem::exists(orphan));
  CHECK(std::filesystem::exists(alive));  // its rank 0 (this process) still runs
  std::filesystem::remove(alive);
}
