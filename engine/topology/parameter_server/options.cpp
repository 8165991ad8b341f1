#include "engine/topology/parameter_server/options.hpp"

#include "engine/core/error.hpp"

namespace laconic::topology {
namespace {

// "weights" or "gradients", as the DSL writes them.
Pull read_pull(const std::string& text) {
  if (text == "weights") return Pull::Weights;
  if (text == "gradients") return Pull::Gradients;
  throw ConfigError(str_cat("parameter_server.pull must be \"weights\" or \"gradients\", got \"", text, "\""));
}

}  // namespace

std::vector<FieldSpec> ParameterServerOptions::fields() {
  return {
      {"servers", FieldType::Int, std::int64_t{1},
       "server processes, each holding one contiguous shard of the parameters, in [1, 64]"},
      {"push", FieldType::String, std::string("gradients"), "what workers push: \"gradients\""},
      {"pull", FieldType::String, std::string("weights"),
       "what workers pull: \"weights\" (the server steps the optimizer and sends the change of "
       "its weights) or \"gradients\" (the mean gradient; workers step their own optimizers)"},
      {"compress_push", FieldType::Bool, true, "workers push through the run's compressor (else dense fp32)"},
      {"compress_pull", FieldType::Bool, false,
       "the server encodes what it sends back with a compressor of the same kind, with its own "
       "state (else dense fp32)"},
  };
}

std::string ParameterServerOptions::why_not_update_exchange(const ComponentSpec& spec) {
  if (read_pull(spec.text("pull")) != Pull::Weights) return "";
  return "with pull = \"weights\" the server steps its own optimizer on the pushes: use pull = \"gradients\", "
         "and each worker applies the mean update it pulls";
}

ParameterServerOptions ParameterServerOptions::from(const ComponentSpec& spec) {
  ParameterServerOptions o;
  o.servers = spec.integer("servers");
  o.pull = read_pull(spec.text("pull"));
  o.compress_push = spec.flag("compress_push");
  o.compress_pull = spec.flag("compress_pull");
  if (o.servers < 1 || o.servers > 64)
    throw ConfigError(str_cat("parameter_server.servers must be in [1, 64], got ", o.servers));
  if (const std::string& push = spec.text("push"); push != "gradients")
    throw ConfigError(str_cat("parameter_server.push must be \"gradients\", got \"", push, "\""));
  return o;
}

std::pair<std::size_t, std::size_t> server_shard(std::size_t n, int servers, int server) {
  const auto s = static_cast<std::size_t>(servers), i = static_cast<std::size_t>(server);
  return {n * i / s, n * (i + 1) / s};
}

}  // namespace laconic::topology
