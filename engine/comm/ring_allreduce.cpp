// The ring allreduce: reduce-scatter, then allgather, 2(p-1) messages of about n/p floats each
// (Communicator::allreduce_sum), and the bytes it sends (the schedule of schedules.hpp).
#include <algorithm>

#include "engine/comm/byte_views.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/schedules.hpp"

namespace laconic::comm {

namespace {

using detail::chunk;
using detail::float_bytes;
using detail::mutable_float_bytes;
using detail::wrap;

}  // namespace

std::uint64_t ring_allreduce_bytes_sent(std::size_t n, int p, int rank) {
  if (p == 1 || n == 0) return 0;
  std::uint64_t bytes = 0;
  for (int s = 0; s < p - 1; ++s) {
    auto [rb, re] = chunk(n, p, wrap(rank - s, p));
    auto [ab, ae] = chunk(n, p, wrap(rank + 1 - s, p));
    bytes += 4 * ((re - rb) + (ae - ab));
  }
  return bytes;
}

void Communicator::allreduce_sum(std::span<float> data) {
  const CollectiveScope collective(*this);
  if (present() == 1 || data.empty()) return;
  const detail::RingGroup world = world_ring();
  ring_reduce_scatter(data, world);
  ring_allgather(data, world);
}

void Communicator::ring_reduce_scatter(std::span<float> data, const detail::RingGroup& g) {
  const int p = g.size(), r = g.position;
  if (p == 1 || data.empty()) return;
  const std::span<float> incoming = scratch(data.size() / static_cast<std::size_t>(p) + 1);
  // After p-1 steps position r holds the full sum of chunk r+1.
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk(data.size(), p, wrap(r - s, p));
    auto [rb, re] = chunk(data.size(), p, wrap(r - s - 1, p));
    std::span<float> in(incoming.data(), re - rb);
    send_recv(g.at(1), float_bytes(data.subspan(sb, se - sb)), g.at(-1), mutable_float_bytes(in));
    for (std::size_t i = 0; i < in.size(); ++i) data[rb + i] += in[i];
  }
}

void Communicator::ring_allgather(std::span<float> data, const detail::RingGroup& g) {
  const int p = g.size(), r = g.position;
  if (p == 1 || data.empty()) return;
  // Position r starts with chunk r+1 reduced and passes each chunk on as it comes.
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk(data.size(), p, wrap(r + 1 - s, p));
    auto [rb, re] = chunk(data.size(), p, wrap(r - s, p));
    send_recv(g.at(1), float_bytes(data.subspan(sb, se - sb)), g.at(-1), mutable_float_bytes(data.subspan(rb, re - rb)));
  }
}

detail::RingGroup Communicator::world_ring() const {
  if (!members_.empty()) {
    const auto at = std::lower_bound(members_.begin(), members_.end(), rank());
    return {members_, static_cast<int>(at - members_.begin())};
  }
  detail::RingGroup g{std::vector<int>(static_cast<std::size_t>(size())), rank()};
  for (int r = 0; r < size(); ++r) g.ranks[static_cast<std::size_t>(r)] = r;
  return g;
}

}  // namespace laconic::comm
