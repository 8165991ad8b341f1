// The one-shot allreduce: each rank sends its whole vector to every other (p-1 messages) and sums
// in rank order, the same bits on every rank.
#include "engine/comm/byte_views.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/schedules.hpp"

namespace laconic::comm {

namespace {

using detail::float_bytes;
using detail::mutable_float_bytes;
using detail::wrap;

}  // namespace

std::uint64_t one_shot_bytes_sent(std::size_t n, int p) { return static_cast<std::uint64_t>(p - 1) * 4 * n; }

void Communicator::allreduce_sum_one_shot(std::span<float> data) {
  const CollectiveScope collective(*this);
  LACONIC_ENFORCE(members_.empty(), "with some ranks absent (set_members) only the ring runs");
  const int p = size(), r = rank();
  if (p == 1 || data.empty()) return;
  // Slot `from` holds rank `from`'s vector (this rank's own is copied in for p > 2); then the sum
  // in rank order, the same bits on every rank.
  const std::span<float> all = scratch(data.size() * static_cast<std::size_t>(p));
  auto slot = [&](int from) { return all.subspan(static_cast<std::size_t>(from) * data.size(), data.size()); };
  for (int s = 1; s < p; ++s) {
    const int from = wrap(r - s, p);
    send_recv(wrap(r + s, p), float_bytes(data), from, mutable_float_bytes(slot(from)));
  }
  if (p == 2) {  // a + b == b + a in IEEE arithmetic: no copy needed
    const auto other = slot(1 - r);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] += other[i];
    return;
  }
  std::copy(data.begin(), data.end(), slot(r).begin());
  std::copy(slot(0).begin(), slot(0).end(), data.begin());
  for (int from = 1; from < p; ++from) {
    const auto v = slot(from);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] += v[i];
  }
}

}  // namespace laconic::comm
