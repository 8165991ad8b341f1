#pragma once
// The asynchronous parameter server of schedules stale_sync and async: each push is applied on
// its own as it arrives, and a worker gets its reply once it is within the staleness bound of
// the slowest unfinished worker.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/topology/parameter_server/options.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// What the server reports for each update it applies.
struct AppliedUpdate {
  int worker = 0;              ///< whose push
  std::int64_t staleness = 0;  ///< steps the worker was ahead of the slowest when it read
                               ///< the weights its gradient was computed on (<= the bound)
  std::int64_t lag = 0;        ///< updates of others applied between that read and this one
  ExchangeStats stats;         ///< this push and the replies it released
};

/// What the server needs of the process that hosts it (engine/train/server.cpp): its model.
class ServerModel {
 public:
  virtual ~ServerModel() = default;
  /// One optimizer step with one worker's gradient of the server's shard.
  virtual void apply(std::span<const float> gradient) = 0;
  /// The shard's current weights.
  virtual void read_weights(std::span<float> out) = 0;
  /// Called after each applied update.
  virtual void on_update(const AppliedUpdate& update) = 0;
};

class AsynchronousServer {
 public:
  /// A server of `n` elements for `workers` workers, replying within `staleness` steps.
  AsynchronousServer(ParameterServerOptions options, std::int64_t staleness, int workers, std::size_t n);

  /// Serves until every worker is done. `compressor` decodes pushes (compress_push). A reply
  /// carries the change of the weights since what that worker was last sent: dense, or
  /// (compress_pull) through `pull[worker]`, in which case the server adds what the worker
  /// decodes to its copy of that worker's weights, so the next reply carries what this one left
  /// out.
  void serve(comm::Communicator& comm, compress::Compressor& compressor, std::span<compress::Compressor* const> pull,
             ServerModel& model);

 private:
  // Replies to every held worker that is now within the bound of the slowest active one;
  // returns how many.
  std::uint64_t release(comm::Communicator& comm, std::span<compress::Compressor* const> pull, ServerModel& model);

  ParameterServerOptions options_;
  std::int64_t staleness_;
  std::size_t workers_, n_;
  std::vector<std::int64_t> clock_, read_version_, read_staleness_;
  std::vector<bool> active_, held_;
  std::vector<std::vector<float>> sent_;  // what each worker was last sent
  std::vector<float> current_, gradient_, change_, decoded_;
  compress::Payload reply_;
  std::vector<std::uint8_t> incoming_;
  std::int64_t version_ = 0;
};

}  // namespace laconic::topology
