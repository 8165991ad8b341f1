#include "engine/topology/allreduce.hpp"

#include "engine/core/error.hpp"
#include "engine/topology/exchange.hpp"

namespace laconic::topology {

std::vector<FieldSpec> AllreduceOptions::fields() {
  return {{"algorithm", FieldType::String, std::string("ring"),
           "collective algorithm: \"ring\" (reduce-scatter + allgather)"}};
}

AllreduceOptions AllreduceOptions::from(const ComponentSpec& spec) {
  AllreduceOptions o;
  o.algorithm = spec.text("algorithm");
  if (o.algorithm != "ring")
    throw ConfigError(str_cat("allreduce.algorithm must be one of: \"ring\"; got \"",
                              o.algorithm, "\""));
  return o;
}

ExchangeStats AllreduceTopology::average(std::span<float> gradient,
                                         compress::Compressor& compressor,
                                         comm::Communicator& comm) {
  return exchange_compressed(gradient, compressor, comm, false, payload_);
}

}  // namespace laconic::topology
