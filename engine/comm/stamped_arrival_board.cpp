#include "engine/comm/stamped_arrival_board.hpp"

#include <algorithm>
#include <utility>

#include "engine/core/error.hpp"

namespace laconic::comm {

namespace {

std::uint64_t positive(std::uint64_t resync_every) {
  LACONIC_ENFORCE(resync_every > 0, "clock offsets are estimated again every N > 0 exchanges, got N = 0");
  return resync_every;
}

}  // namespace

StampedArrivalBoard::StampedArrivalBoard(Communicator& comm, std::function<double()> clock, std::uint64_t resync_every)
    : comm_(comm),
      clock_(std::move(clock)),
      resync_every_(positive(resync_every)),
      sync_(comm.synchronize_clock(clock_)),
      worst_error_(sync_.worst_error) {}

void StampedArrivalBoard::arrive(double seconds) { comm_.begin_stamps(seconds + sync_.offset); }

double StampedArrivalBoard::latest() {
  const double latest = comm_.end_stamps() - sync_.offset;
  if (++exchanges_ % resync_every_ == 0) {
    sync_ = comm_.synchronize_clock(clock_);
    worst_error_ = std::max(worst_error_, sync_.worst_error);
  }
  return latest;
}

}  // namespace laconic::comm
