#pragma once
// The synchronous parameter server: one round per workers' step.
#include <functional>
#include <span>
#include <vector>

#include "engine/topology/parameter_server/options.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// What the server does with the workers' mean gradient: fill `update` with what it sends back
/// (the mean itself, or the change of its weights after its optimizer step).
using ServerUpdate = std::function<void(std::span<const float> mean, std::span<float> update)>;

/// One round's traffic and time at the server.
struct ServerRound {
  ExchangeStats stats;
  bool done = false;  ///< every worker has finished; nothing was exchanged
};

/// A server (rank >= the workers') of `n` gradient elements: each round it receives one push
/// from every worker in rank order, decodes them with `compressor` (the push compressor's
/// decoder), aggregates, calls `update`, encodes the result (with `compressor` when
/// compress_pull, else dense fp32) and sends it to every worker behind a PullHeader with the
/// round's traffic.
class SynchronousServer {
 public:
  SynchronousServer(ParameterServerOptions options, int workers, std::size_t n);
  ServerRound serve_round(compress::Compressor& compressor, comm::Communicator& comm, const ServerUpdate& update);

 private:
  ParameterServerOptions options_;
  int workers_;
  std::vector<float> sum_, update_;
  std::vector<std::uint8_t> incoming_;
  compress::Payload payload_;
  int finished_ = 0;
};

}  // namespace laconic::topology
