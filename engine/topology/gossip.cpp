#include "engine/topology/gossip.hpp"

#include <algorithm>
#include <chrono>

#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::topology {

OptionFields<GossipOptions> GossipOptions::fields() {
  using O = GossipOptions;
  return OptionFields<O>()
      .choice("peers", &O::peers, "\"ring\": fixed neighbours +1, -1, +2, ...; \"random\": k distinct offsets per step",
              {{GossipPeers::Ring, "ring"}, {GossipPeers::Random, "random"}})
      .integer("neighbours", &O::neighbours, "peers each worker mixes with, at most workers - 1", at_least(1))
      .integer("seed", &O::seed, "stream of the random offsets (the same on every worker)");
}

std::vector<int> gossip_offsets(const GossipOptions& options, int workers, std::uint64_t step) {
  const auto k = static_cast<int>(options.neighbours);
  if (k > workers - 1)
    throw ConfigError(str_cat("gossip.neighbours must be in [1, workers - 1] = [1, ", workers - 1, "], got ", k));
  std::vector<int> offsets;
  if (options.peers == GossipPeers::Ring) {
    for (int d = 1; static_cast<int>(offsets.size()) < k; ++d) {
      offsets.push_back(d % workers);
      if (static_cast<int>(offsets.size()) < k) offsets.push_back((workers - d) % workers);
    }
    return offsets;
  }
  // Random: a partial Fisher-Yates shuffle of 1..p-1 from a stream shared by every worker.
  std::vector<int> all;
  for (int o = 1; o < workers; ++o) all.push_back(o);
  compress::Rng rng(compress::derive_seed(static_cast<std::uint64_t>(options.seed), step));
  for (int i = 0; i < k; ++i) {
    const auto j = i + static_cast<int>(rng.below(static_cast<std::uint64_t>(workers - 1 - i)));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
  }
  all.resize(static_cast<std::size_t>(k));
  return all;
}

void GossipTopology::check(const compress::Compressor& compressor) const {
  if (!compressor.lossless())
    throw ConfigError(str_cat("gossip exchanges whole models in fp32; compressor '", compressor.name(),
                              "' is not supported with it (use none())"));
}

ExchangeStats GossipTopology::average(std::span<float> model, compress::Compressor& compressor,
                                      comm::Communicator& comm) {
  check(compressor);
  ExchangeStats stats;
  const comm::ByteCounters before = comm.counters();
  const int p = comm.size(), r = comm.rank();
  const std::uint64_t step = step_++;
  if (p == 1) return stats;
  const std::vector<int> offsets = gossip_offsets(options_, p, step);
  sum_.assign(model.begin(), model.end());
  incoming_.resize(model.size());
  const auto bytes = [](auto span) {
    return std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(span.data()), span.size() * sizeof(float));
  };
  const double t = rank_seconds();
  for (int o : offsets) {
    comm.send_recv((r - o + p) % p, bytes(model), (r + o) % p, bytes(std::span(incoming_)));
    for (std::size_t i = 0; i < model.size(); ++i) sum_[i] += incoming_[i];
  }
  stats.time_communicate = rank_seconds() - t;
  const float scale = 1.0f / static_cast<float>(offsets.size() + 1);
  for (std::size_t i = 0; i < model.size(); ++i) model[i] = sum_[i] * scale;
  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
  stats.bytes_dense = stats.bytes_sent;  // what it sends is already dense fp32
  stats.payload_bytes = model.size() * sizeof(float);
  return stats;
}

}  // namespace laconic::topology
