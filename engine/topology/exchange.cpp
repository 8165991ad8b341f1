#include "engine/topology/exchange.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::topology {
namespace {

/// The sum a self-exchanging compressor asks for: the ring allreduce, timed.
class TimedReducer : public compress::SumReducer {
 public:
  TimedReducer(comm::Communicator& comm, comm::AllreduceAlgorithm algorithm) : comm_(comm), algorithm_(algorithm) {}
  void sum(std::span<float> values) override {
    const double t = rank_seconds();
    comm_.allreduce_sum(values, algorithm_);
    seconds += seconds_since(t);
  }
  int workers() const override { return comm_.present(); }
  double seconds = 0;

 private:
  comm::Communicator& comm_;
  comm::AllreduceAlgorithm algorithm_;
};

/// An exchange's time_wait, apart from moving. A barrier right before the first collective takes
/// the time until the slowest rank arrives; what follows is communication among ranks that are all
/// there. Its few bytes are measurement, not the method's: the counters start after it. Ranks that
/// share an arrival board need no barrier: each leaves its arrival on the board (the moment, on a
/// clock they share, for processes: the host's, or rank 0's through an estimated offset across
/// hosts; its derived clock for threads, whose collectives' messages carry it), and after the
/// collective its wait is the latest arrival less its own. On a shared clock the collective itself was blocked that long before the
/// last rank came, so that wait is taken out of its time.
class PeerWait {
 public:
  PeerWait(comm::Communicator& comm, bool enabled)
      : comm_(comm),
        enabled_(enabled),
        // A board waits for every rank; with some absent (churn) a barrier around those present.
        board_(enabled && comm.members().empty() ? comm.arrivals() : nullptr),
        on_shared_clock_(board_ != nullptr && board_->on_shared_clock() && rank_clock() == RankClockKind::Wall) {}

  /// Before the exchange's first collective.
  void arrive(ExchangeStats& stats) {
    if (!enabled_) return;
    stats.measured_wait = true;
    if (board_ != nullptr) {
      arrival_ = on_shared_clock_ ? rank_seconds() : derived_now();
      board_->arrive(arrival_);
      return;
    }
    const double t = rank_seconds();
    comm_.barrier();
    stats.time_wait = seconds_since(t);
  }

  /// After its last collective, once time_communicate is set.
  void derive(ExchangeStats& stats) {
    if (board_ == nullptr) return;
    stats.time_wait = board_->latest() - arrival_;
    if (on_shared_clock_) stats.time_communicate = std::max(0.0, stats.time_communicate - stats.time_wait);
  }

 private:
  comm::Communicator& comm_;
  bool enabled_;
  comm::ArrivalBoard* board_;
  bool on_shared_clock_;
  double arrival_ = 0;
};

// As PyTorch DDP's fp16 hook: the gradient divided by the workers and cast (the compressor's
// payload, decoded back: the values every rank starts the sum from), then summed in the format by
// the allreduce, each hop rounding again; the mean needs no aggregate. The casts are compression;
// the allreduce, its per-hop coding included, is communication (NCCL does it inside the kernel).
// A codec with a scale per chunk (quantized_allreduce) casts nothing first: the ring's first
// message of each chunk is the worker's quantization, and a worker's own values join each partial
// sum in fp32 before it is quantized again.
void sum_in_transit(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm,
                    const WireCodec& codec, compress::Payload& payload, comm::AllreduceAlgorithm algorithm,
                    PeerWait& peers, ExchangeStats& stats) {
  double t = rank_seconds();
  const float scale = 1.0f / static_cast<float>(comm.present());
  for (float& v : gradient) v *= scale;
  if (codec.idempotent()) {
    compressor.compress(gradient, payload);
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    compressor.decompress_add(payload, gradient);
    stats.payload_bytes = payload.size();
  } else {
    stats.payload_bytes = codec.bytes(gradient.size());
  }
  stats.time_compress = seconds_since(t);
  peers.arrive(stats);
  const comm::ByteCounters before = comm.counters();
  t = rank_seconds();
  comm.allreduce_sum_encoded(gradient, codec, algorithm);
  stats.time_communicate = seconds_since(t);
  stats.decoded_payloads = 1;
  peers.derive(stats);
  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
}

}  // namespace

ExchangeStats exchange_compressed(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm,
                                  bool always_gather, compress::Payload& payload, comm::AllreduceAlgorithm algorithm,
                                  bool wait_for_peers) {
  ExchangeStats stats;
  const WireCodec* codec = always_gather ? nullptr : compressor.transit_codec();
  // A codec that is not idempotent runs on the ring only (AllreduceTopology::check refuses another).
  if (codec != nullptr && !codec->idempotent() && algorithm != comm::AllreduceAlgorithm::Hierarchical)
    algorithm = comm::AllreduceAlgorithm::Ring;
  // The workers present (churn) sum around their ring, this rank at its place in it.
  if (!comm.members().empty()) algorithm = comm::AllreduceAlgorithm::Ring;
  const auto& members = comm.members();
  const int place = members.empty()
                        ? comm.rank()
                        : static_cast<int>(std::lower_bound(members.begin(), members.end(), comm.rank()) - members.begin());
  stats.bytes_dense = comm::allreduce_bytes_sent(gradient.size(), comm.present(), place, algorithm);
  PeerWait peers(comm, wait_for_peers);
  comm::ByteCounters before;

  double t = rank_seconds();
  if (compress::MultiRoundCompressor* multi_round = compressor.multi_round()) {
    peers.arrive(stats);
    before = comm.counters();
    t = rank_seconds();
    // Its collectives are the communication; everything else (both halves of the codec) is
    // counted as compression.
    TimedReducer reducer(comm, algorithm);
    stats.payload_bytes = multi_round->exchange(gradient, reducer);
    stats.time_communicate = reducer.seconds;
    stats.time_compress = seconds_since(t) - reducer.seconds;
    peers.derive(stats);
    stats.traffic = comm.counters().since(before);
    stats.bytes_sent = stats.traffic.sent;
    stats.bytes_received = stats.traffic.received;
    return stats;
  }
  if (codec != nullptr) {
    sum_in_transit(gradient, compressor, comm, *codec, payload, algorithm, peers, stats);
    return stats;
  }
  compressor.compress(gradient, payload);
  stats.time_compress = seconds_since(t);
  stats.payload_bytes = payload.size();
  peers.arrive(stats);
  before = comm.counters();

  if (compressor.summable() && !always_gather) {
    LACONIC_ENFORCE(payload.size() % sizeof(float) == 0, "summable payload of ", payload.size(),
                    " bytes is not a float array");
    std::span<float> values(reinterpret_cast<float*>(payload.data()), payload.size() / sizeof(float));
    t = rank_seconds();
    comm.allreduce_sum(values, algorithm);
    stats.time_communicate = seconds_since(t);
    t = rank_seconds();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    compressor.decompress_add(payload, gradient);
    stats.decoded_payloads = 1;
  } else {
    t = rank_seconds();
    auto payloads = compressor.capabilities().fixed_size ? comm.allgather_same_size(payload) : comm.allgatherv(payload);
    stats.time_communicate = seconds_since(t);
    stats.gathered = true;
    t = rank_seconds();
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    for (const auto& p : payloads) compressor.decompress_add(p, gradient);
    stats.decoded_payloads = static_cast<std::uint32_t>(payloads.size());
  }
  compressor.aggregate(gradient, comm.present());
  stats.time_decompress = seconds_since(t);
  peers.derive(stats);

  stats.traffic = comm.counters().since(before);
  stats.bytes_sent = stats.traffic.sent;
  stats.bytes_received = stats.traffic.received;
  return stats;
}

}  // namespace laconic::topology
