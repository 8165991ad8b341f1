#pragma once
// The arrival board of ranks that are processes on one host: a small file mapped into every
// rank's memory. Their steady clocks are the host's one CLOCK_MONOTONIC, so each rank posts the
// moment it reached the exchange and, after the exchange's collective, reads the latest of
// them: its waiting without the extra round trip of a barrier.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/comm/communicator.hpp"
#include "engine/comm/store.hpp"

namespace laconic::comm {

class SharedArrivalBoard : public ArrivalBoard {
 public:
  /// Maps the board at `path` (created by `create`, with every slot zero) for rank `rank` of `size`.
  /// CommError when the file cannot be created or mapped.
  SharedArrivalBoard(const std::string& path, int rank, int size, bool create);
  ~SharedArrivalBoard() override;
  SharedArrivalBoard(const SharedArrivalBoard&) = delete;
  SharedArrivalBoard& operator=(const SharedArrivalBoard&) = delete;

  bool on_shared_clock() const override { return true; }
  void arrive(double seconds) override;
  double latest() override;

 private:
  double* slots_ = nullptr;  // by exchange parity, then rank: 2 x size
  std::size_t bytes_ = 0;
  int rank_, size_;
  std::uint64_t exchange_ = 0;
};

/// Agrees through `store`, before the ranks connect, on whether they share a host (the same
/// kernel boot: /proc/sys/kernel/random/boot_id) and, when they do, maps a board for all of them
/// that rank 0 created in /dev/shm. Null on every rank when they do not, when rank 0 could not
/// create it, or when rank 0 was told not to (`board_wanted` false on rank 0; the other ranks'
/// value does not count): waiting is then measured otherwise (StampedArrivalBoard). Call
/// remove_shared_board_file() on rank 0 once every rank has connected (each has mapped the board
/// by then).
struct SharedBoardSetup {
  std::unique_ptr<SharedArrivalBoard> board;
  std::string path;  ///< the file, on rank 0, until removed
};
SharedBoardSetup open_shared_arrival_board(KeyValueStore& store, int rank, int size, std::chrono::milliseconds timeout,
                                           bool board_wanted = true);
void remove_shared_board_file(SharedBoardSetup& setup);

/// Removes the boards in /dev/shm whose rank 0 (the pid in the name) no longer runs: what a rank
/// 0 killed between creating its board and every rank connecting leaves. Rank 0 calls it before
/// it creates one.
void remove_orphaned_boards();

}  // namespace laconic::comm
