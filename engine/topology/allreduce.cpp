#include "engine/topology/allreduce.hpp"

#include <cmath>

#include "engine/compress/builtin.hpp"
#include "engine/core/error.hpp"
#include "engine/topology/exchange.hpp"

namespace laconic::topology {

OptionFields<AllreduceOptions> AllreduceOptions::fields() {
  using O = AllreduceOptions;
  return OptionFields<O>()
      .choice("algorithm", &O::algorithm,
            "how summable payloads are summed: \"ring\" (reduce-scatter + allgather, 2(p-1) messages), "
            "\"halving_doubling\" (recursive halving + doubling, 2 log2 p messages), \"one_shot\" (each rank sends "
            "its whole vector to every other, p-1 messages), \"hierarchical\" (on islands, network = cluster { }: a ring "
            "reduce-scatter inside each island, a ring allreduce between islands of the chunk each rank holds, a ring "
            "allgather inside; fp16, bf16 and quantized_allreduce then apply their format between islands only) or "
            "\"auto\" (one_shot for 2 ranks, where it sends the ring's bytes in one message instead of two, and for "
            "vectors of a few KB; else the ring)",
            {{comm::AllreduceAlgorithm::Auto, "auto"},
             {comm::AllreduceAlgorithm::Ring, "ring"},
             {comm::AllreduceAlgorithm::HalvingDoubling, "halving_doubling"},
             {comm::AllreduceAlgorithm::OneShot, "one_shot"},
             {comm::AllreduceAlgorithm::Hierarchical, "hierarchical"}})
      .flag("overlap", &O::overlap,
            "exchange the gradient in buckets while backward is still running, on a communication thread (PyTorch "
            "DDP's scheme); needs schedule synchronous and a compressor that works element- or layer-wise")
      .number("bucket_mb", &O::bucket_mb, "with overlap: a bucket closes once it holds this many MiB of gradient",
              finite_above(0))
      .number("first_bucket_mb", &O::first_bucket_mb,
              "with overlap: the cap of the first bucket (the last layers), so that communication starts early",
              finite_above(0));
}

std::string AllreduceOptions::why_not_update_exchange(const ComponentSpec& spec) {
  if (!spec.flag("overlap")) return "";
  return "allreduce { overlap = true } sends buckets while backward runs, before the optimizer could turn the "
         "gradient into an update: set overlap = false";
}

std::optional<Bucketing> AllreduceTopology::overlap() const {
  if (!options_.overlap) return std::nullopt;
  auto bytes = [](double mb) { return static_cast<std::size_t>(std::max(1.0, std::round(mb * 1024.0 * 1024.0))); };
  return Bucketing{bytes(options_.first_bucket_mb), bytes(options_.bucket_mb), algorithm()};
}

void AllreduceTopology::check(const compress::Compressor& compressor) const {
  const WireCodec* codec = compressor.transit_codec();
  const auto algorithm = options_.algorithm;
  if (codec != nullptr && !codec->idempotent() && algorithm != comm::AllreduceAlgorithm::Auto &&
      algorithm != comm::AllreduceAlgorithm::Ring && algorithm != comm::AllreduceAlgorithm::Hierarchical)
    throw ConfigError(str_cat(compressor.name(),
                              " quantizes each partial sum once, as the ring forms it; halving-doubling and one-shot "
                              "would encode a sum a second time and let the ranks' copies differ: use allreduce { "
                              "algorithm = \"ring\" } (or \"auto\"), or ",
                              compressor.name(), " { gather = true }"));
  if (algorithm == comm::AllreduceAlgorithm::Hierarchical && codec == nullptr && !compressor.summable() &&
      !compressor.exchanges_itself())
    throw ConfigError(str_cat("allreduce { algorithm = \"hierarchical\" } sums: ", compressor.name(),
                              "'s payloads are gathered, not summed; use a compressor that is summed (none, powersgd, "
                              "shared-seed randomk, block_randomk) or summed in transit (fp16, bf16, "
                              "quantized_allreduce: their format between islands only), or another algorithm"));
  if (!options_.overlap || compressor.separable_by_layer()) return;
  std::string separable;
  for (const std::string& name : compress::layer_separable_compressors(compress::builtin_compressors()))
    separable += name + ", ";
  throw ConfigError(str_cat("allreduce { overlap = true } exchanges the gradient bucket by bucket, and ",
                            compressor.name(), " over a bucket is not ", compressor.name(),
                            " over the whole gradient; use a compressor that works element- or layer-wise (",
                            separable, "or any with scope = \"layer\"), or overlap = false"));
}

comm::AllreduceAlgorithm AllreduceTopology::algorithm() const { return options_.algorithm; }

ExchangeStats AllreduceTopology::average(std::span<float> gradient, compress::Compressor& compressor,
                                         comm::Communicator& comm) {
  return exchange_compressed(gradient, compressor, comm, false, payload_, algorithm());
}

}  // namespace laconic::topology
