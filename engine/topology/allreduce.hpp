#pragma once
#include <string>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/core/option_fields.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

struct AllreduceOptions {
  comm::AllreduceAlgorithm algorithm = comm::AllreduceAlgorithm::Auto;
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  bool overlap = false;

  static OptionFields<AllreduceOptions> fields();
  /// With overlap, the buckets leave while backward runs, before the optimizer could act.
  static std::string why_not_update_exchange(const ComponentSpec& spec);
};

/// Every worker ends with the same average. Summable payloads (dense fp32) are reduced with the
/// allreduce of `algorithm` (auto: the ring or the one-shot exchange, comm::choose_allreduce); payloads that cannot be
/// summed compressed (Top-k's index/value pairs) are gathered with the ring allgatherv and decompressed on every
/// worker. With overlap, the gradient travels in buckets while backward is still running, as under PyTorch DDP.
class AllreduceTopology : public Topology {
 public:
  explicit AllreduceTopology(AllreduceOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "allreduce"; }
  std::optional<Bucketing> overlap() const override;
  /// With overlap, refuses a compressor that is not separable_by_layer().
  void check(const compress::Compressor& compressor) const override;
  ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm) override;
  comm::AllreduceAlgorithm algorithm() const;

 private:
  AllreduceOptions options_;
  compress::Payload payload_;  // reused across steps
};

}  // namespace laconic::topology
