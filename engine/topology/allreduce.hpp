#pragma once
#include <string>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

struct AllreduceOptions {
  std::string algorithm = "ring";  ///< collective algorithm; "ring" is the one implemented

  static std::vector<FieldSpec> fields();
  static AllreduceOptions from(const ComponentSpec& spec);
};

/// Every worker ends with the same average. Summable payloads (dense fp32) are reduced with the
/// ring allreduce; payloads that cannot be summed compressed (Top-k's index/value pairs) are
/// gathered with the ring allgatherv and decompressed on every worker.
class AllreduceTopology : public Topology {
 public:
  explicit AllreduceTopology(AllreduceOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "allreduce"; }
  ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor,
                        comm::Communicator& comm) override;

 private:
  AllreduceOptions options_;
  compress::Payload payload_;  // reused across steps
};

}  // namespace laconic::topology
