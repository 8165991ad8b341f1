#pragma once
// The fields of parameter_server { ... } and how a gradient is split among the servers.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/component.hpp"

namespace laconic::topology {

/// What workers pull back after a push.
enum class Pull {
  Weights,    ///< the change of the server's weights: the server steps the optimizer
  Gradients,  ///< the mean gradient: each worker steps its own optimizer
};

struct ParameterServerOptions {
  std::int64_t servers = 1;    ///< server processes, one shard of the parameters each
  Pull pull = Pull::Weights;   ///< what workers pull (they always push gradients)
  bool compress_push = true;   ///< push through the run's compressor (else dense fp32)
  bool compress_pull = false;  ///< pull through a compressor of the same kind (else dense)

  static std::vector<FieldSpec> fields();
  static ParameterServerOptions from(const ComponentSpec& spec);
  /// With pull = "weights" the server steps its own optimizer on what it receives.
  static std::string why_not_update_exchange(const ComponentSpec& spec);
};

/// Elements [begin, end) of a gradient of `n` held by server `server` of `servers`: contiguous,
/// balanced shards.
std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server);

}  // namespace laconic::topology
