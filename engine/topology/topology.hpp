#pragma once
// A Topology decides how workers combine their updates: which collective, over whom.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "engine/comm/communicator.hpp"
#include "engine/compress/compressor.hpp"
#include "engine/core/error.hpp"

namespace laconic::topology {

/// What one exchange cost this worker. Times in seconds, bytes as counted by the Communicator.
struct ExchangeStats {
  double time_compress = 0;
  double time_decompress = 0;
  /// Seconds blocked at the exchange until the slowest rank arrived (a barrier just before the
  /// collectives): a straggler's compute, not communication. Its bytes are in no counter.
  double time_wait = 0;
  bool measured_wait = false;   ///< time_wait was measured (exchange_compressed does)
  double time_communicate = 0;  ///< wall time inside collectives, once every rank had arrived
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_dense = 0;    ///< bytes the same exchange would send uncompressed in fp32
  std::uint64_t payload_bytes = 0;  ///< size of this worker's compressed payload (8 x this / n
                                    ///< = bits per parameter)
  bool gathered = false;            ///< payloads were gathered rather than summed
  /// Payloads this worker decoded per compressed vector: 1 when the summed payload is decoded
  /// once, the workers' count when gathered ones are each decoded, 0 for a compressor that
  /// exchanges itself (its decoding is in time_compress). What a hardware profile's decompress
  /// cost is multiplied by (docs/hardware.md).
  std::uint32_t decoded_payloads = 0;
  comm::ByteCounters traffic;       ///< this exchange's traffic (what the network model projects)
  /// Seconds of this exchange (compression, waiting, collectives, decoding) that ran on the
  /// communication thread while backward was still going (allreduce { overlap = true }): hidden
  /// behind computation. The other times above then hold only what the step waited for after
  /// backward. Zero for an exchange that starts after backward.
  double time_overlapped = 0;
  bool overlapped = false;  ///< the exchange ran bucket by bucket, overlapped with backward
  /// Overlapped exchanges: the communication time `project` would give on a modelled link, when
  /// the buckets' traffic is replayed on it with their measured ready times. Empty otherwise.
  std::optional<double> projected_time_communicate;
};

/// How an overlapped exchange groups gradients (PyTorch DDP's scheme): buckets of whole layers
/// in reverse order (the order backward produces them), each closed once it holds at least its
/// cap; the first bucket has a smaller cap so that communication starts early.
struct Bucketing {
  std::size_t first_bucket_bytes = 1 << 20;
  std::size_t bucket_bytes = 25 << 20;
  comm::AllreduceAlgorithm algorithm = comm::AllreduceAlgorithm::Ring;  ///< for each bucket
};

/// What a topology is, known from its options without building it (Registry::traits): the
/// options struct's `static TopologyTraits traits(const Options&)`, which the topology's
/// constructor hands to Topology's.
struct TopologyTraits {
  /// Processes the topology needs beyond the workers (parameter servers); they take the ranks
  /// after the workers'.
  int extra_ranks = 0;
  /// average() leaves the change of the server's weights in the gradient's place, to be added
  /// to the model instead of an optimizer step (parameter_server, pull = weights).
  bool pulls_weights = false;
  /// The topology mixes models with neighbours (gossip) instead of averaging gradients over all
  /// workers; schedules then update locally and mix.
  bool mixes_models = false;
  /// The topology can serve a schedule with a staleness bound (stale_sync, async): a parameter
  /// server with pull = "weights", whose server steps its optimizer with each push on its own.
  bool serves_asynchronously = false;

  bool operator==(const TopologyTraits& other) const = default;
};

/// Builds a compressor of the run's kind for a flat piece of `size` elements that the topology
/// codes on its own (a parameter server's shard), seeded by the run's seed, `stream` (one of
/// compress::streams) and `index`; with its error feedback off when `error_feedback` is false.
using FlatCompressorFactory = std::function<std::unique_ptr<compress::Compressor>(
    std::size_t size, std::uint64_t stream, int index, bool error_feedback)>;

/// What a run hands its topology once built, before the first step (Topology::wire).
struct TopologyWiring {
  /// The schedule's staleness bound (stale_sync, async); only a topology whose traits say
  /// serves_asynchronously is given one (the catalog refuses the others before building).
  std::optional<std::int64_t> staleness_bound{};
  FlatCompressorFactory flat_compressor{};
};

class Topology {
 public:
  using Traits = TopologyTraits;

  explicit Topology(TopologyTraits traits = {}) : traits_(traits) {}
  virtual ~Topology() = default;
  virtual std::string name() const = 0;
  const TopologyTraits& traits() const { return traits_; }
  int extra_ranks() const { return traits_.extra_ranks; }
  bool pulls_weights() const { return traits_.pulls_weights; }
  bool mixes_models() const { return traits_.mixes_models; }
  /// Called once by every process of the run after building, before the first step: the
  /// schedule's staleness bound and the factory of compressors the topology owns itself. Only
  /// topologies that own compressors or serve asynchronous schedules need it.
  virtual void wire(const TopologyWiring& wiring) { (void)wiring; }
  /// Called once by every worker after its last step.
  virtual void finish(comm::Communicator& comm) { (void)comm; }
  /// Called before every step with the point the run's compressor got (set_epoch and
  /// set_step): compressors the topology owns itself (a parameter server's per-shard ones)
  /// follow it.
  virtual void set_step(const StepPoint& point) { (void)point; }
  /// A worker's checkpoint (engine/train/checkpoint.hpp): the state of compressors the topology
  /// owns itself. load_state() runs on a fresh topology, before its first step.
  virtual void save_state(StateWriter& out) const { (void)out; }
  virtual void load_state(StateReader& in) { (void)in; }
  /// Set when gradients are exchanged bucket by bucket on a communication thread while backward
  /// is still running (allreduce { overlap = true }); the worker then feeds the buckets itself
  /// (engine/topology/bucketed_exchange.hpp) instead of calling average().
  virtual std::optional<Bucketing> overlap() const { return std::nullopt; }
  /// Refuses (ConfigError) a compressor this topology cannot run, before training starts.
  virtual void check(const compress::Compressor& compressor) const { (void)compressor; }
  /// Replaces this worker's `gradient` by the aggregate over all workers of their compressed
  /// gradients (Compressor::aggregate: the mean for most compressors). Every worker must call it
  /// with a gradient of the same length.
  virtual ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor,
                                comm::Communicator& comm) = 0;

 private:
  TopologyTraits traits_;
};

}  // namespace laconic::topology
