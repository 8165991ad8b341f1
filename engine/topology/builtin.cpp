#include "engine/topology/builtin.hpp"

#include "engine/topology/allgather.hpp"
#include "engine/topology/allreduce.hpp"
#include "engine/topology/gossip.hpp"
#include "engine/topology/parameter_server/worker_side.hpp"

namespace laconic::topology {

Registry<Topology> builtin_topologies() {
  Registry<Topology> r("topology");
  r.add<AllreduceTopology, AllreduceOptions>("allreduce",
                                             "every worker gets the average: allreduce (ring or one-shot, by the "
                                             "message model), or allgather for payloads that cannot be summed "
                                             "compressed");
  r.add<AllgatherTopology, AllgatherOptions>(
      "allgather",
      "every worker gathers every payload (sizes first, unless they have a fixed "
      "size) and decodes them all, even summable ones");
  r.add<GossipTopology, GossipOptions>(
      "gossip", "decentralized SGD: each worker mixes its model with k neighbours' (dense fp32)");
  r.add<ParameterServerTopology, ParameterServerOptions>(
      "parameter_server",
      "workers push to a server process that averages and sends back the "
      "mean gradient or its new weights; compression either way");
  return r;
}

}  // namespace laconic::topology
