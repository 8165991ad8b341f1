#include "engine/topology/exchange.hpp"

#include <algorithm>
#include <chrono>

#include "engine/core/error.hpp"

namespace laconic::topology {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// The sum a self-exchanging compressor asks for: the ring allreduce, timed.
class TimedReducer : public compress::SumReducer {
 public:
  TimedReducer(comm::Communicator& comm, comm::AllreduceAlgorithm algorithm) : comm_(comm), algorithm_(algorithm) {}
  void sum(std::span<float> values) override {
    const auto t = Clock::now();
    comm_.allreduce_sum(values, algorithm_);
    seconds += seconds_since(t);
  }
  int workers() const override { return comm_.size(); }
  double seconds = 0;

 private:
  comm::Communicator& comm_;
  comm::AllreduceAlgorithm algorithm_;
};

}  // namespace

ExchangeStats exchange_compressed(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm,
                                  bool always_gather, compress::Payload& payload, comm::AllreduceAlgorithm algorithm,
                                  bool wait_for_peers) {
  ExchangeStats stats;
  stats.bytes_dense = comm::allreduce_bytes_sent(gradient.size(), comm.size(), comm.rank(), algorithm);
  // Waiting apart from moving: a barrier right before the first collective takes the time until
  // the slowest rank arrives; what follows is communication among ranks that are all there. Its
  // few bytes are measurement, not the method's: the counters start after it.
  auto wait_for_all = [&] {
    if (!wait_for_peers) return;
    const auto t = Clock::now();
    comm.barrier();
    stats.time_wait = seconds_since(t);
    stats.measured_wait = true;
  };
  comm::ByteCounters before;

  auto t = Clock::now();
  if (compress::MultiRoundCompressor* multi_round = compressor.multi_round()) {
    wait_for_all();
    before = comm.counters();
    t = Clock::now();
    // Its collectives are the communication; everything else (both halves of the codec) is
    // counted as compression.
    TimedReducer reducer(comm, algorithm);
    stats.payload_bytes = multi_round->exchange(gradient, reducer);
    stats.time_communicate = reducer.seconds;
    stats.time_compress = seconds_since(t) - reducer.seconds;
    stats.traffic = comm.counters().since(before);
    stats.bytes_sent = stats.traffic.sent;
    stats.bytes_received = stats.traffic.received;
    return stats;
  }
  compressor.compress(gradient, payload);
  stats.time_compress = seconds_since(t);
  stats.payload_bytes = payload.size();
  wait_for_all();
  before = comm.counters();

  if (compressor.summable() && !always_gather) {
    LACONIC_ENFORCE(payload.size() % sizeof(float) == 0, "summable payload of ", payload.size(),
                    " bytes is not a float array");
    std::span<float> values(reinterpret_cast<float*>(payload.data()), payload.size() / sizeof(float));
    t = Clock::now();
    comm.allreduce_sum(values, algorithm);
    stats.time_communicate = seconds_since(t);
    t = Clock::now();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    compressor.decompress_add(payload, gradient);
  } else {
    t = Clock::now();
    auto payloads = comm.allgatherv(payload);
    stats.time_communicate = seconds_since(t);
    stats.gathered = true;
    t = Clock::now();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    for (const auto& p : payloads) compressor.decompress_add(p, gradient);
  }
  compressor.aggregate(gradient, comm.size());
  stats.time_decompress = seconds_since(t);

  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
  return stats;
}

}  // namespace laconic::topology
