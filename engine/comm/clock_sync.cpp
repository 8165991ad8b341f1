// Communicator::synchronize_clock: the offset of each rank's clock from rank 0's, estimated as
// NTP does from ping-pongs, before arrivals on several hosts can be compared (StampedArrivalBoard).
#include <algorithm>
#include <limits>

#include "engine/comm/communicator.hpp"

namespace laconic::comm {
namespace {

std::span<const std::uint8_t> bytes_of(const double& x) {
  return {reinterpret_cast<const std::uint8_t*>(&x), sizeof x};
}
std::span<std::uint8_t> bytes_into(double& x) { return {reinterpret_cast<std::uint8_t*>(&x), sizeof x}; }

}  // namespace

ClockSync Communicator::synchronize_clock(const std::function<double()>& clock, int rounds) {
  const ByteCounters kept = counters_;
  ClockSync sync;
  if (rank() == 0) {
    // Serves one rank at a time, so that each pong leaves as soon as its ping came.
    for (int r = 1; r < size(); ++r) {
      for (int i = 0; i < rounds; ++i) {
        double ping = 0;
        send_recv(r, {}, r, bytes_into(ping));
        const double now = clock();
        send_recv(r, bytes_of(now), r, {});
      }
      double error = 0;
      send_recv(r, {}, r, bytes_into(error));
      sync.worst_error = std::max(sync.worst_error, error);
    }
  } else if (size() > 1) {
    sync.error = std::numeric_limits<double>::infinity();
    for (int i = 0; i < rounds; ++i) {
      const double sent = clock();
      double theirs = 0;
      send_recv(0, bytes_of(sent), 0, bytes_into(theirs));
      const double back = clock();
      // Rank 0 read `theirs` between `sent` and `back` on this clock: offset within half the trip.
      if ((back - sent) / 2 < sync.error) {
        sync.error = (back - sent) / 2;
        sync.offset = theirs - (sent + back) / 2;
      }
    }
    send_recv(0, bytes_of(sync.error), 0, {});
    sync.worst_error = sync.error;
  }
  counters_ = kept;
  return sync;
}

}  // namespace laconic::comm
