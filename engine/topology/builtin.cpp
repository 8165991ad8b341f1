#include "engine/topology/builtin.hpp"

#include "engine/topology/allreduce.hpp"

namespace laconic::topology {

Registry<Topology> builtin_topologies() {
  Registry<Topology> r("topology");
  r.add<AllreduceTopology, AllreduceOptions>(
      "allreduce", "every worker gets the average: ring allreduce, or allgather for payloads "
                   "that cannot be summed compressed");
  return r;
}

}  // namespace laconic::topology
