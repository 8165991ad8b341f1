#include "engine/topology/allreduce.hpp"

#include "engine/core/error.hpp"
#include "engine/topology/exchange.hpp"

namespace laconic::topology {

std::vector<FieldSpec> AllreduceOptions::fields() {
  return {{"algorithm", FieldType::String, std::string("ring"),
           "\"ring\" (reduce-scatter + allgather, 2(p-1) messages) or \"halving_doubling\" "
           "(recursive halving + doubling, 2 log2 p messages)"}};
}

AllreduceOptions AllreduceOptions::from(const ComponentSpec& spec) {
  AllreduceOptions o;
  o.algorithm = spec.text("algorithm");
  if (o.algorithm != "ring" && o.algorithm != "halving_doubling")
    throw ConfigError(str_cat("allreduce.algorithm must be \"ring\" or \"halving_doubling\", "
                              "got \"", o.algorithm, "\""));
  return o;
}

ExchangeStats AllreduceTopology::average(std::span<float> gradient,
                                         compress::Compressor& compressor,
                                         comm::Communicator& comm) {
  return exchange_compressed(gradient, compressor, comm, false, payload_,
                             options_.algorithm == "ring"
                                 ? comm::AllreduceAlgorithm::Ring
                                 : comm::AllreduceAlgorithm::HalvingDoubling);
}

}  // namespace laconic::topology
