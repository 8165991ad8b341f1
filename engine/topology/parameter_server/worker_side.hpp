#pragma once
// A parameter server, the worker's side: workers push their (compressed) gradient to a server
// process, the server averages, and every worker pulls the result back: the averaged gradient,
// or the server's new weights (as the change since the last pull). Servers are processes of
// their own, ranks workers .. workers + servers - 1 of the run's world (synchronous_server.hpp,
// asynchronous_server.hpp; the wire format in protocol.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/topology/parameter_server/options.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// average() pushes `gradient`, shard by shard, to the servers and replaces it by what it
/// pulls: the mean gradient (pull = "gradients") or the change of the server's weights (pull =
/// "weights"; the worker adds it to its model instead of stepping its own optimizer:
/// pulls_weights()). finish() tells the servers this worker is done. Synchronous, the step's
/// projected traffic is the busiest server's whole round (every push received, every pull
/// sent), which a worker waits for; asynchronous (a staleness bound from wire()), its own exchanges.
class ParameterServerTopology : public Topology {
 public:
  explicit ParameterServerTopology(ParameterServerOptions options)
      : Topology(ParameterServerOptions::traits(options)), options_(std::move(options)) {}
  std::string name() const override { return "parameter_server"; }
  void check(const compress::Compressor& compressor) const override;
  ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor, comm::Communicator& comm) override;
  void finish(comm::Communicator& comm) override;
  void set_step(const StepPoint& point) override;
  /// The per-shard compressors' states (several servers). They are built at the first step,
  /// when the gradient's length is known: a loaded state waits for that.
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  const ParameterServerOptions& options() const { return options_; }

  /// Takes the run's factory for the compressors it owns (with several servers each shard gets
  /// its own, state and all, on the workers and on its server; asynchronous compressed pulls get
  /// one per worker and shard), and a staleness bound, which switches to the asynchronous
  /// protocol (schedules stale_sync and async): the server applies each push on its own as it
  /// arrives and replies to a worker once it is at most `staleness` steps ahead of the slowest
  /// unfinished worker (a very large bound: async). A bound needs pull = "weights".
  void wire(const TopologyWiring& wiring) override;
  /// The bound when asynchronous; nothing when synchronous.
  std::optional<std::int64_t> staleness() const { return staleness_; }

  /// The compressor for a flat `shard` of `size` elements on `rank` (the stream
  /// compress::streams::kServerShard), or null with a single server (which uses the run's
  /// compressor as built, layer shapes and all).
  std::unique_ptr<compress::Compressor> make_shard_compressor(std::size_t size, int shard, int rank) const;
  /// The pull compressor for `worker` and shard `shard` of `size` elements: the run's kind with
  /// its error feedback off (the server keeps each worker's copy of the weights, so what one
  /// pull leaves out is in the next).
  std::unique_ptr<compress::Compressor> make_pull_compressor(std::size_t size, int shard, int worker) const;

 private:
  compress::Compressor& shard_compressor(int shard, compress::Compressor& given, std::size_t size, int rank);
  // The push header goes point to point to a synchronous server, to whoever takes it first at
  // an asynchronous one.
  void send_header(comm::Communicator& comm, int server, std::span<const std::uint8_t> header) const;

  ParameterServerOptions options_;
  std::optional<std::int64_t> staleness_;
  FlatCompressorFactory factory_;
  StepPoint point_;  // the last set_step()
  std::vector<std::unique_ptr<compress::Compressor>> shard_compressors_;
  std::vector<std::vector<std::uint8_t>> loaded_states_;  ///< per shard, until the shard's compressor is built
  std::vector<compress::Payload> payloads_;
  std::vector<std::uint8_t> incoming_;
};

}  // namespace laconic::topology
