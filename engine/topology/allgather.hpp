#pragma once
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

struct AllgatherOptions {
  static OptionFields<AllgatherOptions> fields() { return {}; }
};

/// Every worker gathers every worker's payload (ring allgatherv: sizes first, so payloads may
/// differ in size or be empty; no sizes for a compressor whose payloads have a fixed size) and
/// decodes them all, even payloads that could be summed: the
/// pattern of frameworks that gather sparse gradients (and the comparison point for allreduce).
class AllgatherTopology : public Topology {
 public:
  explicit AllgatherTopology(AllgatherOptions) {}
  std::string name() const override { return "allgather"; }
  void check(const compress::Compressor& compressor) const override;
  ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm) override;

 private:
  compress::Payload payload_;
};

}  // namespace laconic::topology
