// The hierarchical allreduce over islands (Communicator::allreduce_sum_hierarchical): reduce inside
// each island, allreduce between islands, broadcast inside, in the chunked form of Horovod's
// hierarchical allreduce and NCCL's trees of rings: the island's ring reduce-scatter leaves each
// rank one chunk of the island's sum; the ranks at the same place of every island allreduce that
// chunk in a ring of their own; the island's ring allgather spreads the chunks.
#include <algorithm>

#include "engine/comm/communicator.hpp"
#include "engine/comm/schedules.hpp"
#include "engine/core/error.hpp"

namespace laconic::comm {

namespace {

// Gives the messages of one phase their load between islands (0: inside), whatever their peers.
class ForcedPhase {
 public:
  ForcedPhase(int& phase, int load) : phase_(phase) { phase_ = load; }
  ~ForcedPhase() { phase_ = -1; }
  ForcedPhase(const ForcedPhase&) = delete;
  ForcedPhase& operator=(const ForcedPhase&) = delete;

 private:
  int& phase_;
};

}  // namespace

detail::RingGroup Communicator::island_ring() const {
  LACONIC_ENFORCE(!islands_.empty(), "a collective over islands needs them (network = cluster { })");
  const int mine = islands_[static_cast<std::size_t>(rank())];
  detail::RingGroup inside;
  for (int r = 0; r < size(); ++r)
    if (islands_[static_cast<std::size_t>(r)] == mine) {
      if (r == rank()) inside.position = inside.size();
      inside.ranks.push_back(r);
    }
  return inside;
}

int Communicator::allreduce_sum_island(std::span<float> data) {
  const CollectiveScope collective(*this);
  const detail::RingGroup inside = island_ring();
  const ForcedPhase phase(forced_phase_, 0);
  ring_reduce_scatter(data, inside);
  ring_allgather(data, inside);
  return inside.size();
}

void Communicator::allreduce_sum_hierarchical(std::span<float> data, const WireCodec* between) {
  const CollectiveScope collective(*this);
  LACONIC_ENFORCE(members_.empty(), "with some ranks absent (set_members) only the ring runs");
  // The island's ranks in rank order, and this rank's place among them.
  const detail::RingGroup inside = island_ring();
  const int mine = islands_[static_cast<std::size_t>(rank())];
  const int islands = *std::max_element(islands_.begin(), islands_.end()) + 1;
  LACONIC_ENFORCE(inside.size() * islands == size(), "a hierarchical allreduce needs islands of one size");
  // The ranks at the same place of every island, in island order.
  detail::RingGroup across{{}, mine};
  for (int i = 0; i < islands; ++i) across.ranks.push_back(i * inside.size() + inside.position);
  if (data.empty()) return;
  {
    const ForcedPhase phase(forced_phase_, 0);
    ring_reduce_scatter(data, inside);
  }
  const auto [b, e] = detail::chunk(data.size(), inside.size(), detail::wrap(inside.position + 1, inside.size()));
  const std::span<float> held = data.subspan(b, e - b);
  {
    // The island's k ranks send between islands at once: k messages share its link out and in.
    const ForcedPhase phase(forced_phase_, inside.size());
    if (between == nullptr) {
      ring_reduce_scatter(held, across);
      ring_allgather(held, across);
    } else {
      if (between->idempotent()) between->round(held, wire_scratch(between->bytes(held.size())));
      allreduce_ring_encoded(held, *between, across);
    }
  }
  const ForcedPhase phase(forced_phase_, 0);
  ring_allgather(data, inside);
}

}  // namespace laconic::comm
