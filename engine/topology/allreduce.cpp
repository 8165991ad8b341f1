#include "engine/topology/allreduce.hpp"

#include <algorithm>
#include <chrono>

#include "engine/core/error.hpp"

namespace laconic::topology {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

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
  ExchangeStats stats;
  const comm::ByteCounters before = comm.counters();
  stats.bytes_dense = comm::ring_allreduce_bytes_sent(gradient.size(), comm.size(), comm.rank());

  auto t = Clock::now();
  compressor.compress(gradient, payload_);
  stats.time_compress = seconds_since(t);
  stats.payload_bytes = payload_.size();

  if (compressor.summable()) {
    LACONIC_ENFORCE(payload_.size() % sizeof(float) == 0, "summable payload of ",
                    payload_.size(), " bytes is not a float array");
    std::span<float> values(reinterpret_cast<float*>(payload_.data()),
                            payload_.size() / sizeof(float));
    t = Clock::now();
    comm.allreduce_sum(values);
    stats.time_communicate = seconds_since(t);
    t = Clock::now();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    compressor.decompress_add(payload_, gradient);
  } else {
    t = Clock::now();
    auto payloads = comm.allgatherv(payload_);
    stats.time_communicate = seconds_since(t);
    stats.gathered = true;
    t = Clock::now();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    for (const auto& p : payloads) compressor.decompress_add(p, gradient);
  }
  compressor.aggregate(gradient, comm.size());
  stats.time_decompress = seconds_since(t);

  stats.bytes_sent = comm.counters().sent - before.sent;
  stats.bytes_received = comm.counters().received - before.received;
  return stats;
}

}  // namespace laconic::topology
