#pragma once
// The arrival board of ranks on several hosts, whose clocks differ: each rank's arrival, moved
// onto rank 0's clock by the offset Communicator::synchronize_clock estimated, travels as a stamp
// beside the exchange's own messages (Communicator::begin_stamps), and after the collective each
// rank holds the latest of them: its waiting without the extra round trip of a barrier, within
// the offsets' errors.
#include <cstdint>
#include <functional>

#include "engine/comm/communicator.hpp"

namespace laconic::comm {

class StampedArrivalBoard : public ArrivalBoard {
 public:
  /// How often the offsets are estimated again (clocks drift apart): every this many exchanges.
  static constexpr std::uint64_t kResyncEvery = 1000;

  /// Estimates the clock offsets (a collective: every rank of `comm` constructs one at once),
  /// reading `clock`, the clock the arrivals are posted on.
  StampedArrivalBoard(Communicator& comm, std::function<double()> clock, std::uint64_t resync_every = kResyncEvery);

  bool on_shared_clock() const override { return true; }
  void arrive(double seconds) override;
  /// The latest arrival, on this rank's clock; every `resync_every`-th call then estimates the
  /// offsets again (after the collective, outside every timed phase).
  double latest() override;

  /// The last estimate: on rank 0, `worst_error` bounds every rank's.
  const ClockSync& sync() const { return sync_; }
  /// The largest `worst_error` of every estimate so far, the rendezvous's included: on rank 0 a
  /// bound on every rank's offset error over the whole run.
  double worst_error() const { return worst_error_; }

 private:
  Communicator& comm_;
  std::function<double()> clock_;
  std::uint64_t resync_every_;
  std::uint64_t exchanges_ = 0;
  ClockSync sync_;
  double worst_error_;
};

}  // namespace laconic::comm
