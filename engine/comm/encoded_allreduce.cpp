// The allreduce whose messages are in a narrow format (Communicator::allreduce_sum_encoded): the
// fp32 collectives' schedules, each message encoded before it is sent and decoded when it comes,
// every partial sum rounded back to the format where it is formed.
#include <algorithm>
#include <utility>

#include "engine/comm/communicator.hpp"
#include "engine/comm/schedules.hpp"
#include "engine/core/error.hpp"

namespace laconic::comm {

std::span<std::uint8_t> Communicator::wire_scratch(std::size_t bytes) {
  if (wire_scratch_.size() < bytes) wire_scratch_.resize(bytes);
  return std::span<std::uint8_t>(wire_scratch_).first(bytes);
}

void Communicator::allreduce_sum_encoded(std::span<float> data, const WireCodec& codec, AllreduceAlgorithm algorithm) {
  const CollectiveScope collective(*this);
  if (present() == 1 || data.empty()) return;
  if (!members_.empty()) return allreduce_ring_encoded(data, codec, world_ring());  // the members' ring
  if (algorithm == AllreduceAlgorithm::Hierarchical) return allreduce_sum_hierarchical(data, &codec);
  LACONIC_ENFORCE(codec.idempotent() || algorithm == AllreduceAlgorithm::Auto || algorithm == AllreduceAlgorithm::Ring,
                  "a codec that rounds each partial sum once, stochastically, is summed by rings only");
  if (!codec.idempotent()) return allreduce_ring_encoded(data, codec, world_ring());
  if (algorithm == AllreduceAlgorithm::Auto) algorithm = choose_allreduce(data.size(), size());
  switch (algorithm) {
    case AllreduceAlgorithm::HalvingDoubling:
      return allreduce_halving_doubling_encoded(data, codec);
    case AllreduceAlgorithm::OneShot:
      return allreduce_one_shot_encoded(data, codec);
    default:
      return allreduce_ring_encoded(data, codec, world_ring());
  }
}

void Communicator::allreduce_ring_encoded(std::span<float> data, const WireCodec& codec, const detail::RingGroup& g) {
  const int p = g.size(), r = g.position;
  if (p == 1 || data.empty()) return;
  const int right = g.at(1), left = g.at(-1);
  const auto chunk_of = [&](int c) { return detail::chunk(data.size(), p, detail::wrap(c, p)); };
  const std::size_t largest = codec.bytes(data.size() / static_cast<std::size_t>(p) + 1);
  // Two message buffers that trade places: `out` always holds the next chunk to send, encoded
  // once, when it is formed (the partial sum just rounded; in the allgather, the chunk received).
  const std::span<std::uint8_t> wire = wire_scratch(2 * largest);
  std::span<std::uint8_t> out = wire.first(largest), in = wire.subspan(largest);
  const std::span<float> incoming = scratch(data.size() / static_cast<std::size_t>(p) + 1);
  {
    auto [b, e] = chunk_of(r);
    codec.encode(data.subspan(b, e - b), out.first(codec.bytes(e - b)));
  }
  // Reduce-scatter: each hop adds its own values to the partial sum it got, and rounds it by
  // encoding it as the next message (decoded back, so that its own copy holds the same bits).
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk_of(r - s);
    auto [rb, re] = chunk_of(r - s - 1);
    const auto recv = in.first(codec.bytes(re - rb));
    send_recv(right, out.first(codec.bytes(se - sb)), left, recv);
    const std::span<float> got = incoming.first(re - rb), mine = data.subspan(rb, re - rb);
    codec.decode(recv, got);
    for (std::size_t i = 0; i < got.size(); ++i) mine[i] += got[i];
    const auto encoded = out.first(codec.bytes(mine.size()));
    codec.encode(mine, encoded);
    codec.decode(encoded, mine);
  }
  // Allgather of the reduced chunks: each received chunk is forwarded as it came.
  for (int s = 0; s < p - 1; ++s) {
    auto [sb, se] = chunk_of(r + 1 - s);
    auto [rb, re] = chunk_of(r - s);
    const auto recv = in.first(codec.bytes(re - rb));
    send_recv(right, out.first(codec.bytes(se - sb)), left, recv);
    codec.decode(recv, data.subspan(rb, re - rb));
    std::swap(out, in);
  }
}

void Communicator::allreduce_one_shot_encoded(std::span<float> data, const WireCodec& codec) {
  const int p = size(), r = rank();
  const std::size_t n = data.size(), encoded = codec.bytes(n);
  // Slot `from` holds rank `from`'s encoded vector (this rank's own as well), then the sum in rank
  // order in fp32, rounded once: the same bits on every rank.
  const std::span<std::uint8_t> all = wire_scratch(encoded * static_cast<std::size_t>(p));
  auto slot = [&](int from) { return all.subspan(static_cast<std::size_t>(from) * encoded, encoded); };
  codec.encode(data, slot(r));
  for (int s = 1; s < p; ++s) {
    const int from = detail::wrap(r - s, p);
    send_recv(detail::wrap(r + s, p), slot(r), from, slot(from));
  }
  const std::span<float> value = scratch(n);
  codec.decode(slot(0), data);
  for (int from = 1; from < p; ++from) {
    codec.decode(slot(from), value);
    for (std::size_t i = 0; i < n; ++i) data[i] += value[i];
  }
  codec.round(data, slot(r));
}

void Communicator::allreduce_halving_doubling_encoded(std::span<float> data, const WireCodec& codec) {
  const std::size_t encoded = codec.bytes(data.size());
  const std::span<std::uint8_t> wire = wire_scratch(2 * encoded);
  const std::span<std::uint8_t> out = wire.first(encoded), in = wire.subspan(encoded);
  detail::halving_doubling_schedule(
      data.size(), size(), rank(),
      [&](int peer, std::size_t sb, std::size_t se, std::size_t rb, std::size_t re, bool reduce) {
        const auto send = out.first(codec.bytes(se - sb)), recv = in.first(codec.bytes(re - rb));
        codec.encode(data.subspan(sb, se - sb), send);
        send_recv(peer, send, peer, recv);
        const std::span<float> mine = data.subspan(rb, re - rb);
        if (!reduce) return codec.decode(recv, mine);
        const std::span<float> got = scratch(re - rb);
        codec.decode(recv, got);
        for (std::size_t i = 0; i < got.size(); ++i) mine[i] += got[i];
        codec.round(mine, out);
      });
}

}  // namespace laconic::comm
