#pragma once
// The fields of parameter_server { ... } and how a gradient is split among the servers.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/option_fields.hpp"
#include "engine/topology/topology.hpp"

namespace laconic::topology {

/// What workers pull back after a push.
enum class Pull {
  Weights,    ///< the change of the server's weights: the server steps the optimizer
  Gradients,  ///< the mean gradient: each worker steps its own optimizer
};

/// How the DSL spells them.
inline const std::vector<std::pair<Pull, std::string>> kPullNames = {{Pull::Weights, "weights"},
                                                                     {Pull::Gradients, "gradients"}};

struct ParameterServerOptions {
  std::int64_t servers = 1;
  std::string push = "gradients";  // the one value there is, named for the reader
  Pull pull = Pull::Weights;
  bool compress_push = true;
  bool compress_pull = false;

  static OptionFields<ParameterServerOptions> fields();
  /// The servers take ranks of their own; pull = "weights" leaves the change of the weights, and
  /// the server then steps on each push as it comes, so it can serve asynchronous schedules.
  static TopologyTraits traits(const ParameterServerOptions& o) {
    return {.extra_ranks = static_cast<int>(o.servers),
            .pulls_weights = o.pull == Pull::Weights,
            .serves_asynchronously = o.pull == Pull::Weights};
  }
  /// With pull = "weights" the server steps its own optimizer on what it receives.
  static std::string why_not_update_exchange(const ComponentSpec& spec);
};

/// Elements [begin, end) of a gradient of `n` held by server `server` of `servers`: contiguous,
/// balanced shards.
std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server);

}  // namespace laconic::topology
