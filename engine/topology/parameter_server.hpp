#pragma once
// A parameter server: workers push their (compressed) gradient to a server process, the server
// averages, and every worker pulls the result back: the averaged gradient, or the server's new
// weights (as the change since the last pull). Servers are processes of their own, ranks
// workers .. workers + servers - 1 of the run's world.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/component.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

struct ParameterServerOptions {
  std::int64_t servers = 1;        ///< server processes, one shard of the parameters each
  std::string push = "gradients";  ///< what workers send
  std::string pull = "weights";    ///< "weights": the server steps its optimizer; "gradients"
  bool compress_push = true;       ///< push through the run's compressor (else dense fp32)
  bool compress_pull = false;      ///< pull through a compressor of the same kind (else dense)

  static std::vector<FieldSpec> fields();
  static ParameterServerOptions from(const ComponentSpec& spec);
  /// With pull = "weights" the server steps its own optimizer on what it receives.
  static std::string why_not_update_exchange(const ComponentSpec& spec);
};

/// Elements [begin, end) of a gradient of `n` held by server `server` of `servers`: contiguous,
/// balanced shards.
std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server);

/// Bytes of the header of every pull message: uint64 payload bytes, then the round's traffic at
/// the server (uint64 messages, uint64 link bytes), so each worker can project the fan-in.
inline constexpr std::size_t kPullHeaderBytes = 24;

/// The worker's side. average() pushes `gradient` (8-byte size word, then the payload) to the
/// server and replaces it by what it pulls: the mean gradient (pull = "gradients") or the
/// change of the server's weights (pull = "weights"; the worker adds it to its model instead
/// of stepping its own optimizer: pulls_weights()). finish() tells the server this worker is
/// done. The step's projected traffic is the server's whole round (every push received, every
/// pull sent): a worker waits for all of it.
class ParameterServerTopology : public Topology {
 public:
  explicit ParameterServerTopology(ParameterServerOptions options)
      : options_(std::move(options)) {}
  std::string name() const override { return "parameter_server"; }
  int extra_ranks() const override { return static_cast<int>(options_.servers); }
  bool pulls_weights() const override { return options_.pull == "weights"; }
  void check(const compress::Compressor& compressor) const override;
  ExchangeStats average(std::span<float> gradient, compress::Compressor& compressor,
                        comm::Communicator& comm) override;
  void finish(comm::Communicator& comm) override;
  void set_step(const StepPoint& point) override;
  /// The per-shard compressors' states (several servers). They are built at the first step,
  /// when the gradient's length is known: a loaded state waits for that.
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  const ParameterServerOptions& options() const { return options_; }

  /// Switches to the asynchronous protocol (schedules stale_sync and async): the server applies
  /// each push on its own as it arrives and replies to a worker once it is at most `staleness`
  /// steps ahead of the slowest unfinished worker (a very large bound: async). Needs pull =
  /// "weights" (ConfigError otherwise).
  void set_staleness(std::int64_t staleness) override;
  /// -1 when synchronous.
  std::int64_t staleness() const { return staleness_; }

  /// Builds a compressor of the run's kind for a flat shard of `size` elements, seeded for
  /// shard `shard` and rank `rank`; with several servers each shard gets its own (state and
  /// all), on the workers and on its server.
  using CompressorFactory = std::function<std::unique_ptr<compress::Compressor>(
      std::size_t size, int shard, int rank)>;
  void set_compressor_factory(CompressorFactory factory) { factory_ = std::move(factory); }
  /// The factory's compressor for `shard`, or null with a single server (which uses the run's
  /// compressor as built, layer shapes and all).
  std::unique_ptr<compress::Compressor> make_shard_compressor(std::size_t size, int shard,
                                                              int rank) const;

  /// Asynchronous compressed pulls: the server codes each worker's pulls with a compressor of
  /// its own, built by this factory (the run's kind with its error feedback off: the server
  /// keeps each worker's copy of the weights, so what one pull leaves out is in the next).
  void set_pull_compressor_factory(CompressorFactory factory) {
    pull_factory_ = std::move(factory);
  }
  /// The pull compressor for `worker` and shard `shard` of `size` elements.
  std::unique_ptr<compress::Compressor> make_pull_compressor(std::size_t size, int shard,
                                                             int worker) const;

 private:
  compress::Compressor& shard_compressor(int shard, compress::Compressor& given,
                                         std::size_t size, int rank);

  ParameterServerOptions options_;
  std::int64_t staleness_ = -1;
  CompressorFactory factory_, pull_factory_;
  StepPoint point_;  // the last set_step()
  std::vector<std::unique_ptr<compress::Compressor>> shard_compressors_;
  std::vector<std::vector<std::uint8_t>> loaded_states_;  ///< per shard, until the shard's compressor is built
  std::vector<compress::Payload> payloads_;
  std::vector<std::uint8_t> incoming_;
};

/// What the server does with the workers' mean gradient: fill `update` with what it sends back
/// (the mean itself, or the change of its weights after its optimizer step).
using ServerUpdate = std::function<void(std::span<const float> mean, std::span<float> update)>;

/// What the asynchronous server reports for each update it applies.
struct AppliedUpdate {
  int worker = 0;              ///< whose push
  std::int64_t staleness = 0;  ///< steps the worker was ahead of the slowest when it read
                               ///< the weights its gradient was computed on (<= the bound)
  std::int64_t lag = 0;        ///< updates of others applied between that read and this one
  ExchangeStats stats;         ///< this push and the replies it released
};

/// The server's side of stale_sync / async: `apply` steps the optimizer with one worker's
/// gradient; `weights` writes the current weights (flat). Runs until every worker is done and
/// calls `on_update` after each update. A reply carries the change of the weights since what
/// that worker was last sent: dense, or (compress_pull) through `pull[worker]`; the server
/// then adds what the worker decodes to its copy of that worker's weights, so the
/// next reply carries what this one left out.
void serve_asynchronously(const ParameterServerOptions& options, std::int64_t staleness,
                          int workers, std::size_t n, compress::Compressor& compressor,
                          std::span<compress::Compressor* const> pull, comm::Communicator& comm,
                          const std::function<void(std::span<const float>)>& apply,
                          const std::function<void(std::span<float>)>& weights,
                          const std::function<void(const AppliedUpdate&)>& on_update);

/// One round's traffic and time at the server.
struct ServerRound {
  ExchangeStats stats;
  bool done = false;  ///< every worker has finished; nothing was exchanged
};

/// The server's side (rank `workers` of the world): receives one push from every worker in rank
/// order, decodes them with `compressor` (the push compressor's decoder), aggregates, calls
/// `update`, encodes the result (with `compressor` when compress_pull, else dense fp32) and
/// sends it to every worker. `n` is the gradient's length.
class ParameterServer {
 public:
  ParameterServer(ParameterServerOptions options, int workers, std::size_t n);
  ServerRound serve_round(compress::Compressor& compressor, comm::Communicator& comm,
                          const ServerUpdate& update);

 private:
  ParameterServerOptions options_;
  int workers_;
  std::vector<float> sum_, update_;
  std::vector<std::uint8_t> incoming_;
  compress::Payload payload_;
  int finished_ = 0;
};

}  // namespace laconic::topology
