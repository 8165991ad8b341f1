#pragma once
// The exchange every averaging topology shares: compress, then sum the payloads with the ring
// allreduce or gather them with the ring allgatherv, decode, aggregate; or, for a compressor
// that exchanges itself (PowerSGD), hand it a timed allreduce.
#include <span>

#include "engine/comm/communicator.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// Replaces `gradient` by the aggregate over all workers. Summable payloads are allreduced
/// unless `always_gather`, and so are those summed in transit (fp16, bf16: in their format, the
/// gradient divided by the workers first, as DDP's fp16 hook does; int8 and int4 by the ring
/// whatever `algorithm`, requantized at each hop); the others are gathered and decoded on every worker. `payload` is
/// scratch reused across calls. With `wait_for_peers`, time_wait is measured: from the
/// communicator's arrival board where it has one, else by a barrier before the first collective
/// (a bucketed exchange measures it for its first bucket only).
ExchangeStats exchange_compressed(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm,
                                  bool always_gather, compress::Payload& payload,
                                  comm::AllreduceAlgorithm algorithm = comm::AllreduceAlgorithm::Ring,
                                  bool wait_for_peers = true);

}  // namespace laconic::topology
