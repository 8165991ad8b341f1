#include "engine/topology/parameter_server/options.hpp"

#include "engine/core/error.hpp"

namespace laconic::topology {

OptionFields<ParameterServerOptions> ParameterServerOptions::fields() {
  using O = ParameterServerOptions;
  return OptionFields<O>()
      .integer("servers", &O::servers, "server processes, each holding one contiguous shard of the parameters",
               closed(1, 64))
      .text("push", &O::push, "what workers push", {"gradients"})
      .choice("pull", &O::pull,
              "what workers pull: \"weights\" (the server steps the optimizer and sends the change of its weights) "
              "or \"gradients\" (the mean gradient; workers step their own optimizers)",
              kPullNames)
      .flag("compress_push", &O::compress_push, "workers push through the run's compressor (else dense fp32)")
      .flag("compress_pull", &O::compress_pull,
            "the server encodes what it sends back with a compressor of the same kind, with its own state (else "
            "dense fp32)");
}

std::string ParameterServerOptions::why_not_update_exchange(const ComponentSpec& spec) {
  if (fields().read(spec).pull != Pull::Weights) return "";
  return "with pull = \"weights\" the server steps its own optimizer on the pushes: use pull = \"gradients\", "
         "and each worker applies the mean update it pulls";
}

std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server) {
  const auto s = static_cast<std::size_t>(servers), i = static_cast<std::size_t>(server);
  return {n * i / s, n * (i + 1) / s};
}

}  // namespace laconic::topology
