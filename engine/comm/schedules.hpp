#pragma once
// The collectives' schedules, shared by the fp32 collectives, the encoded ones
// (encoded_allreduce.cpp) and the byte counts, so that all follow one schedule. Internal to comm.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace laconic::comm::detail {

inline int wrap(int r, int p) { return ((r % p) + p) % p; }

/// The ranks a ring runs over, in ring order, and this rank's position among them: the whole
/// world, or an island's ranks, or one rank of each island (allreduce_sum_hierarchical).
struct RingGroup {
  std::vector<int> ranks;
  int position = 0;

  int size() const { return static_cast<int>(ranks.size()); }
  /// The rank `offset` places after this one around the ring.
  int at(int offset) const { return ranks[static_cast<std::size_t>(wrap(position + offset, size()))]; }
};

/// Chunk c of n elements split into p nearly equal parts: [begin, end).
inline std::pair<std::size_t, std::size_t> chunk(std::size_t n, int p, int c) {
  std::size_t base = n / static_cast<std::size_t>(p), extra = n % static_cast<std::size_t>(p);
  auto uc = static_cast<std::size_t>(c);
  std::size_t begin = uc * base + std::min(uc, extra);
  return {begin, begin + base + (uc < extra ? 1 : 0)};
}

/// The schedule of halving-doubling for rank `r` of `p` over `n` floats, as calls of
/// `exchange(peer, send_begin, send_end, recv_begin, recv_end, reduce)`: send [send_begin,
/// send_end), receive into [recv_begin, recv_end) and add (reduce) or overwrite. Shared by the
/// real collective and the byte count, so both follow one schedule.
template <class Exchange>
void halving_doubling_schedule(std::size_t n, int p, int r, Exchange exchange) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  const int extra = p - q;
  // Fold: among the first 2*extra ranks, even ones hand everything to their odd neighbour.
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      exchange(r + 1, 0, n, 0, 0, true);   // send all
      exchange(r + 1, 0, 0, 0, n, false);  // get the result back
      return;
    }
    exchange(r - 1, 0, 0, 0, n, true);  // receive and add
  }
  const int v = r < 2 * extra ? r / 2 : r - extra;  // rank among the q
  auto real = [extra](int vr) { return vr < extra ? 2 * vr + 1 : vr + extra; };
  std::vector<std::pair<std::size_t, std::size_t>> segments;
  std::size_t lo = 0, hi = n;
  for (int mask = q / 2; mask >= 1; mask /= 2) {
    const int peer = real(v ^ mask);
    const std::size_t mid = lo + (hi - lo) / 2;
    segments.push_back({lo, hi});
    if ((v & mask) == 0) {
      exchange(peer, mid, hi, lo, mid, true);  // keep the lower half
      hi = mid;
    } else {
      exchange(peer, lo, mid, mid, hi, true);  // keep the upper half
      lo = mid;
    }
  }
  for (int mask = 1; mask < q; mask *= 2) {
    const int peer = real(v ^ mask);
    const auto [plo, phi] = segments.back();
    segments.pop_back();
    // The other half of the parent segment is the peer's.
    if (lo == plo) {
      exchange(peer, lo, hi, hi, phi, false);
      hi = phi;
    } else {
      exchange(peer, lo, hi, plo, lo, false);
      lo = plo;
    }
  }
  if (r < 2 * extra) exchange(r - 1, 0, n, 0, 0, false);  // the folded neighbour's result
}

}  // namespace laconic::comm::detail
