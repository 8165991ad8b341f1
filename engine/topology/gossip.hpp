#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// How a gossip worker picks the peers it mixes with.
enum class GossipPeers {
  Ring,    ///< fixed neighbours +1, -1, +2, ...
  Random,  ///< k distinct offsets per step, from a stream every worker shares
};

struct GossipOptions {
  GossipPeers peers = GossipPeers::Ring;
  std::int64_t neighbours = 2;
  std::int64_t seed = 0;

  static OptionFields<GossipOptions> fields();
  static TopologyTraits traits(const GossipOptions&) { return {.mixes_models = true}; }
  static std::string why_not_update_exchange(const ComponentSpec&) {
    return "gossip exchanges models, not gradients or updates";
  }
};

/// The k peer offsets of one step for p workers: "ring" takes the first k of +1, -1, +2, -2, ...
/// (mod p); "random" draws k distinct offsets in [1, p-1] from `seed` and `step`. Offsets are
/// the same on every worker, so the mixing matrix is circulant, hence doubly stochastic: mixing
/// keeps the workers' mean.
std::vector<int> gossip_offsets(const GossipOptions& options, int workers, std::uint64_t step);

/// Decentralized SGD (Lian et al. 2017, D-PSGD): after its local update each worker replaces its
/// model by the mean of its own and k peers' models (worker r receives from r + o for each
/// offset o, sending to r - o). Models travel dense in fp32 (compressed gossip, as in CHOCO-SGD,
/// is not implemented: any compressor but none is refused). No allreduce: replicas differ, and
/// the consensus distance measures by how much.
class GossipTopology : public Topology {
 public:
  explicit GossipTopology(GossipOptions options)
      : Topology(GossipOptions::traits(options)), options_(std::move(options)) {}
  std::string name() const override { return "gossip"; }
  void check(const compress::Compressor& compressor) const override;
  ExchangeStats average(std::span<float> model, compress::Compressor& compressor, comm::Communicator& comm) override;

 private:
  GossipOptions options_;
  std::uint64_t step_ = 0;
  std::vector<float> incoming_, sum_;
};

}  // namespace laconic::topology
