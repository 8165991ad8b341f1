// The halving-doubling allreduce: recursive halving, then doubling, 2 log2 p messages
// (detail::halving_doubling_schedule, shared with the byte count).
#include "engine/comm/byte_views.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/schedules.hpp"

namespace laconic::comm {

namespace {

using detail::float_bytes;
using detail::mutable_float_bytes;

}  // namespace

std::uint64_t halving_doubling_bytes_sent(std::size_t n, int p, int rank) {
  if (p == 1 || n == 0) return 0;
  std::uint64_t bytes = 0;
  detail::halving_doubling_schedule(
      n, p, rank, [&](int, std::size_t sb, std::size_t se, std::size_t, std::size_t, bool) { bytes += 4 * (se - sb); });
  return bytes;
}

void Communicator::allreduce_sum_halving_doubling(std::span<float> data) {
  const CollectiveScope collective(*this);
  LACONIC_ENFORCE(members_.empty(), "with some ranks absent (set_members) only the ring runs");
  const int p = size(), r = rank();
  if (p == 1 || data.empty()) return;
  detail::halving_doubling_schedule(data.size(), p, r,
                            [&](int peer, std::size_t sb, std::size_t se, std::size_t rb, std::size_t re, bool reduce) {
                              const auto send = float_bytes(data.subspan(sb, se - sb));
                              if (!reduce) {
                                send_recv(peer, send, peer, mutable_float_bytes(data.subspan(rb, re - rb)));
                                return;
                              }
                              const std::span<float> incoming = scratch(re - rb);
                              send_recv(peer, send, peer, mutable_float_bytes(incoming));
                              for (std::size_t i = 0; i < incoming.size(); ++i) data[rb + i] += incoming[i];
                            });
}

}  // namespace laconic::comm
