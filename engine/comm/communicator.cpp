#include "engine/comm/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "engine/comm/schedules.hpp"
#include "engine/core/error.hpp"
#include "engine/core/units.hpp"

namespace laconic::comm {
namespace {

using detail::wrap;

}  // namespace

std::span<float> Communicator::scratch(std::size_t floats) {
  if (scratch_.size() < floats) scratch_.resize(floats);
  return std::span<float>(scratch_).first(floats);
}

void Communicator::delay_message(int to) const {
  const bool crosses = between_delay_ >= 0 && !islands_.empty() &&
                       islands_[static_cast<std::size_t>(to)] != islands_[static_cast<std::size_t>(rank())];
  const double delay = crosses ? between_delay_ : message_delay_;
  if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
}

void Communicator::send_recv(int to, std::span<const std::uint8_t> send, int from, std::span<std::uint8_t> recv) {
  if (send.empty() && recv.empty()) return;
  if (sent_to_.empty()) {
    sent_to_.assign(static_cast<std::size_t>(size()), 0);
    received_from_.assign(static_cast<std::size_t>(size()), 0);
  }
  LACONIC_ENFORCE(send.empty() || (to >= 0 && to < size()), "send to rank ", to, " of ", size());
  LACONIC_ENFORCE(recv.empty() || (from >= 0 && from < size()), "receive from rank ", from, " of ", size());
  const std::uint64_t send_tag = send.empty() ? 0 : sent_to_[static_cast<std::size_t>(to)]++;
  const std::uint64_t recv_tag = recv.empty() ? 0 : received_from_[static_cast<std::size_t>(from)]++;
  if (!send.empty()) delay_message(to);
  if (stamping_) {
    double incoming = stamp_;
    transfer_stamped(to, send, send_tag, from, recv, recv_tag, stamp_, incoming);
    stamp_ = std::max(stamp_, incoming);
  } else {
    transfer(to, send, send_tag, from, recv, recv_tag);
  }
  count(send.empty() ? -1 : to, send.size(), recv.empty() ? -1 : from, recv.size());
}

std::uint64_t Communicator::send_sized(int to, std::span<const std::uint8_t> bytes) {
  const std::uint64_t size = bytes.size();
  send_recv(to, {reinterpret_cast<const std::uint8_t*>(&size), sizeof size}, -1, {});
  send_recv(to, bytes, -1, {});
  return size + sizeof size;
}

std::vector<std::uint8_t> Communicator::receive_sized(int from) {
  std::uint64_t size = 0;
  send_recv(-1, {}, from, {reinterpret_cast<std::uint8_t*>(&size), sizeof size});
  std::vector<std::uint8_t> bytes(size);
  send_recv(-1, {}, from, bytes);
  return bytes;
}

void Communicator::count(int to, std::size_t send, int from, std::size_t recv) {
  const std::size_t bytes = std::max(send, recv);
  counters_.sent += send;
  counters_.received += recv;
  counters_.messages += 1;
  counters_.link_bytes += bytes;
  const int load = islands_.empty() ? 0 : between_load(to, from);
  if (load == 0) return;
  counters_.between_messages += 1;
  counters_.between_link_bytes += bytes;
  counters_.between_shared_bytes += static_cast<std::uint64_t>(load) * bytes;
}

void Communicator::set_islands(std::vector<int> island_of_rank) {
  LACONIC_ENFORCE(island_of_rank.empty() || static_cast<int>(island_of_rank.size()) == size(), "islands for ",
                  island_of_rank.size(), " ranks, the world has ", size());
  islands_ = std::move(island_of_rank);
}

void Communicator::set_members(std::vector<int> ranks) {
  LACONIC_ENFORCE(std::is_sorted(ranks.begin(), ranks.end()) &&
                      std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end(),
                  "members must be distinct ranks in rank order");
  LACONIC_ENFORCE(ranks.empty() || (ranks.front() >= 0 && ranks.back() < size()), "members outside the world of ",
                  size());
  LACONIC_ENFORCE(ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), rank()), "rank ", rank(),
                  " is not among the members it is given");
  LACONIC_ENFORCE(ranks.empty() || islands_.empty(), "members and islands do not go together yet");
  members_ = static_cast<int>(ranks.size()) == size() ? std::vector<int>{} : std::move(ranks);
}

int Communicator::between_load(int to, int from) const {
  const int p = size(), r = rank();
  const auto island = [&](int rank) { return islands_[static_cast<std::size_t>(rank)]; };
  if (forced_phase_ >= 0) return forced_phase_;
  if (collective_depth_ == 0)
    return (to >= 0 && island(to) != island(r)) || (from >= 0 && island(from) != island(r)) ? 1 : 0;
  // Every rank of a collective's phase sends the same way: to r + shift (a ring, a one-shot
  // round), or to r ^ mask (halving-doubling's pairwise exchange). The phase's messages that
  // cross share the links between islands: its load is the most of them out of one island or
  // into one.
  const int peer = to >= 0 ? to : from;
  if (peer < 0) return 0;
  const bool pairwise = to >= 0 && to == from;
  const int mask = r ^ peer, shift = ((peer - r) % p + p) % p;
  const int islands = *std::max_element(islands_.begin(), islands_.end()) + 1;
  std::vector<int> out(static_cast<std::size_t>(islands), 0), in(static_cast<std::size_t>(islands), 0);
  for (int other = 0; other < p; ++other) {
    const int target = pairwise ? (other ^ mask) : (other + shift) % p;
    if (target >= p || island(other) == island(target)) continue;
    ++out[static_cast<std::size_t>(island(other))];
    ++in[static_cast<std::size_t>(island(target))];
  }
  return std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
}

void Communicator::transfer_stamped(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                    std::span<std::uint8_t> recv, std::uint64_t recv_tag, double stamp_out,
                                    double& stamp_in) {
  transfer(to, send, send_tag, from, recv, recv_tag);
  const std::span<const std::uint8_t> out{reinterpret_cast<const std::uint8_t*>(&stamp_out), sizeof stamp_out};
  const std::span<std::uint8_t> in{reinterpret_cast<std::uint8_t*>(&stamp_in), sizeof stamp_in};
  transfer(to, send.empty() ? out.first(0) : out, send_tag | kStampTag, from, recv.empty() ? in.first(0) : in,
           recv_tag | kStampTag);
}

void Communicator::begin_stamps(double arrival) {
  stamping_ = true;
  stamp_ = arrival;
}

double Communicator::end_stamps() {
  stamping_ = false;
  return stamp_;
}

std::vector<std::vector<std::uint8_t>> Communicator::allgatherv(std::span<const std::uint8_t> mine) {
  const CollectiveScope collective(*this);
  const detail::RingGroup g = world_ring();
  const int p = g.size(), r = g.position;
  std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(p));
  out[static_cast<std::size_t>(r)].assign(mine.begin(), mine.end());
  if (p == 1) return out;
  const int right = g.at(1), left = g.at(-1);
  // Sizes first (ring allgather of one uint64 per rank), so every receive has an exact length.
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(p), 0);
  sizes[static_cast<std::size_t>(r)] = mine.size();
  for (int s = 0; s < p - 1; ++s) {
    auto sc = static_cast<std::size_t>(wrap(r - s, p));
    auto rc = static_cast<std::size_t>(wrap(r - s - 1, p));
    send_recv(right, {reinterpret_cast<const std::uint8_t*>(&sizes[sc]), 8}, left,
              {reinterpret_cast<std::uint8_t*>(&sizes[rc]), 8});
  }
  forward_payloads(out, sizes);
  return out;
}

std::vector<std::vector<std::uint8_t>> Communicator::allgather_same_size(std::span<const std::uint8_t> mine) {
  const CollectiveScope collective(*this);
  const detail::RingGroup g = world_ring();
  const int p = g.size(), r = g.position;
  std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(p));
  out[static_cast<std::size_t>(r)].assign(mine.begin(), mine.end());
  forward_payloads(out, std::vector<std::uint64_t>(static_cast<std::size_t>(p), mine.size()));
  return out;
}

void Communicator::forward_payloads(std::vector<std::vector<std::uint8_t>>& out,
                                    const std::vector<std::uint64_t>& sizes) {
  const detail::RingGroup g = world_ring();
  const int p = g.size(), r = g.position;
  const int right = g.at(1), left = g.at(-1);
  for (int s = 0; s < p - 1; ++s) {
    auto sc = static_cast<std::size_t>(wrap(r - s, p));
    auto rc = static_cast<std::size_t>(wrap(r - s - 1, p));
    out[rc].resize(sizes[rc]);
    send_recv(right, out[sc], left, out[rc]);
  }
}

AllreduceAlgorithm choose_allreduce(std::size_t n, int p) {
  if (p <= 2) return AllreduceAlgorithm::OneShot;
  const LinkSpec link;
  // Rank 0's messages and bytes: each message of the ring carries about n/p floats.
  const double ring = link.project(2.0 * (p - 1), static_cast<double>(ring_allreduce_bytes_sent(n, p, 0)));
  const double one_shot = link.project(p - 1.0, static_cast<double>(one_shot_bytes_sent(n, p)));
  return one_shot < ring ? AllreduceAlgorithm::OneShot : AllreduceAlgorithm::Ring;
}

std::uint64_t allreduce_bytes_sent(std::size_t n, int p, int rank, AllreduceAlgorithm algorithm) {
  if (p == 1 || n == 0) return 0;
  if (algorithm == AllreduceAlgorithm::Auto) algorithm = choose_allreduce(n, p);
  switch (algorithm) {
    case AllreduceAlgorithm::HalvingDoubling:
      return halving_doubling_bytes_sent(n, p, rank);
    case AllreduceAlgorithm::OneShot:
      return one_shot_bytes_sent(n, p);
    default:
      return ring_allreduce_bytes_sent(n, p, rank);
  }
}

void Communicator::allreduce_sum(std::span<float> data, AllreduceAlgorithm algorithm) {
  if (!members_.empty()) return allreduce_sum(data);  // the ranks present: their ring
  if (algorithm == AllreduceAlgorithm::Auto) algorithm = choose_allreduce(data.size(), size());
  switch (algorithm) {
    case AllreduceAlgorithm::HalvingDoubling:
      return allreduce_sum_halving_doubling(data);
    case AllreduceAlgorithm::OneShot:
      return allreduce_sum_one_shot(data);
    case AllreduceAlgorithm::Hierarchical:
      return allreduce_sum_hierarchical(data);
    default:
      return allreduce_sum(data);
  }
}

void Communicator::send_to_any_receiver(int to, std::span<const std::uint8_t> send) {
  LACONIC_ENFORCE(!send.empty(), "send_to_any_receiver needs a non-empty message");
  LACONIC_ENFORCE(to >= 0 && to < size(), "send to rank ", to, " of ", size());
  delay_message(to);
  transfer(to, send, kAnySourceTag, to, {}, 0);
  count(to, send.size(), -1, 0);
}

int Communicator::receive_from_any(std::span<const int> from, std::span<std::uint8_t> recv) {
  LACONIC_ENFORCE(!recv.empty() && !from.empty(), "receive_from_any needs ranks and a buffer");
  const int sender = transfer_from_any(from, recv, kAnySourceTag);
  count(-1, 0, sender, recv.size());
  return sender;
}

void Communicator::barrier() {
  float token = 1.0f;
  allreduce_sum({&token, 1});
  LACONIC_ENFORCE(token == static_cast<float>(present()), "barrier expected ", present(), " ranks, counted ", token);
}

}  // namespace laconic::comm
