#include "engine/topology/allgather.hpp"

#include "engine/core/error.hpp"
#include "engine/topology/exchange.hpp"

namespace laconic::topology {

void AllgatherTopology::check(const compress::Compressor& compressor) const {
  if (compressor.exchanges_itself())
    throw ConfigError(str_cat(compressor.name(),
                              " runs its own allreduces; use topology = "
                              "allreduce()"));
}

ExchangeStats AllgatherTopology::average(std::span<float> gradient, compress::Compressor& compressor,
                                         comm::Communicator& comm) {
  check(compressor);
  return exchange_compressed(gradient, compressor, comm, true, payload_);
}

}  // namespace laconic::topology
