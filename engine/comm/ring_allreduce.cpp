// The ring allreduce: reduce-scatter, then allgather, 2(p-1) messages of about n/p floats each
// (Communicator::allreduce_sum), and the bytes it sends (the schedule of schedules.hpp).
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
  const int p = size(), r = rank();
  if (p == 1 || data.empty()) return;
  const int right = wrap(r + 1, p), left = wrap(r - 1, p);
  const std::span<float> incoming = scratch(data.size() / static_cast<std::size_t>(p) + 1);
  // Reduce-scatter: after p-1 steps rank r holds the full sum of chunk r+1.
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk(data.size(), p, wrap(r - s, p));
    auto [rb, re] = chunk(data.size(), p, wrap(r - s - 1, p));
    std::span<float> in(incoming.data(), re - rb);
    send_recv(right, float_bytes(data.subspan(sb, se - sb)), left, mutable_float_bytes(in));
    for (std::size_t i = 0; i < in.size(); ++i) data[rb + i] += in[i];
  }
  // Allgather of the reduced chunks.
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk(data.size(), p, wrap(r + 1 - s, p));
    auto [rb, re] = chunk(data.size(), p, wrap(r - s, p));
    send_recv(right, float_bytes(data.subspan(sb, se - sb)), left, mutable_float_bytes(data.subspan(rb, re - rb)));
  }
}

}  // namespace laconic::comm
