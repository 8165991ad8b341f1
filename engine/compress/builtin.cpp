#include "engine/compress/builtin.hpp"

#include "engine/compress/adaptive.hpp"
#include "engine/compress/block_randomk.hpp"
#include "engine/compress/chain.hpp"
#include "engine/compress/dgc.hpp"
#include "engine/compress/half.hpp"
#include "engine/compress/none.hpp"
#include "engine/compress/onebit.hpp"
#include "engine/compress/powersgd.hpp"
#include "engine/compress/qsgd.hpp"
#include "engine/compress/quantized_allreduce.hpp"
#include "engine/compress/randomk.hpp"
#include "engine/compress/scoped.hpp"
#include "engine/compress/sign.hpp"
#include "engine/compress/sparseloco.hpp"
#include "engine/compress/terngrad.hpp"
#include "engine/compress/threshold.hpp"
#include "engine/compress/topk.hpp"
#include "engine/compress/uniform.hpp"

namespace laconic::compress {

Registry<Compressor> builtin_compressors() {
  Registry<Compressor> r("compressor");
  r.add<NoneCompressor, NoneOptions>("none", "no compression: fp32 gradients, summed by allreduce");
  r.add<Fp16Compressor, Fp16Options>(
      "fp16", "casts each element to IEEE binary16 (round to nearest even), 2 bytes per element");
  r.add<Bf16Compressor, Bf16Options>("bf16",
                                     "casts each element to bfloat16 (round to nearest even), 2 bytes per element");
  r.add<UniformCompressor, UniformOptions>("uniform",
                                           "deterministic min-max quantization to the centres of 2^bits bins");
  r.add<AdaptiveCompressor, AdaptiveOptions>("adaptive",
                                             "entropy-adaptive N-bit min-max quantization with Huffman-coded bins "
                                             "(Oland & Raj 2015)");
  r.add<QsgdCompressor, QsgdOptions>("qsgd",
                                     "unbiased stochastic quantization of |x|/norm to `levels` levels per bucket; "
                                     "sign + level bits, or Elias-coded levels");
  r.add<TerngradCompressor, TerngradOptions>("terngrad",
                                             "unbiased ternary {-s, 0, s} with s = max|g|, 2 bits per element");
  r.add<SignSgdCompressor, SignSgdOptions>("signsgd",
                                           "sends one sign bit per element; workers combine by majority vote");
  r.add<SignumCompressor, SignumOptions>("signum",
                                         "sends the signs of a momentum buffer; workers combine by majority vote");
  r.add<EfSignSgdCompressor, EfSignSgdOptions>(
      "ef_signsgd", "sends (||p||_1/n)*sign(p) of the error-corrected gradient p, 1 bit per element");
  r.add<OnebitCompressor, OnebitOptions>(
      "onebit", "1-bit SGD: a sign bit per element plus the mean of each side, error feedback");
  r.add<TopkCompressor, TopkOptions>("topk",
                                     "sends the k = ceil(ratio*n) largest-magnitude entries as (index, value) pairs");
  r.add<RandomkCompressor, RandomkOptions>(
      "randomk",
      "sends k = ceil(ratio*n) uniformly random entries; with shared_seed every worker "
      "picks the same indices and sends values only (summed by allreduce)");
  r.add<BlockRandomkCompressor, BlockRandomkOptions>(
      "block_randomk",
      "sends one contiguous block of k = ceil(ratio*n) entries at an offset "
      "shared by all workers, values only (summed by allreduce)");
  r.add<ThresholdCompressor, ThresholdOptions>(
      "threshold", "sends every entry with |g| > tau as (index, value) pairs; variable size");
  r.add<DgcCompressor, DgcOptions>("dgc",
                                   "deep gradient compression: momentum correction and masking, sampled threshold, "
                                   "(index, value) pairs; use with sgd momentum = 0");
  r.add<PowerSgdCompressor, PowerSgdOptions>("powersgd",
                                             "rank-r approximation P Q^T of each layer's matrix by one power iteration "
                                             "per step, two allreduces (Vogels et al. 2019), error feedback");
  r.add<ChainCompressor, ChainOptions>("chain",
                                       "a sparsifier then a compressor of the values it keeps (e.g. topk, then qsgd)");
  r.add<SparselocoCompressor, SparselocoOptions>(
      "sparseloco", "SparseLoCo (Sarfi et al. 2025): each chunk's top-k of a decaying error, 2-bit levels; "
                    "for diloco's pseudo-gradients");
  r.add<QuantizedAllreduceCompressor, QuantizedAllreduceOptions>(
      "quantized_allreduce",
      "8 or 4 bits with a scale per chunk, summed in the ring and requantized at each hop (INTELLECT-1, CGX): "
      "a quarter or an eighth of dense's bytes at any number of workers");
  r.add_common_fields({
      {"scope", FieldType::String, std::string("global"),
       "\"global\": one compressor over the whole gradient; \"layer\": one per layer"},
      {"min_size", FieldType::Int, std::int64_t{0}, "layers with fewer elements are sent dense (fp32), >= 0"},
  });
  return r;
}

namespace {

std::unique_ptr<Compressor> build_unseeded(const Registry<Compressor>& registry, const ComponentSpec& spec,
                                           const std::vector<LayerShape>& shapes) {
  const ComponentSpec resolved = registry.resolve(spec);
  const Scope scope = parse_scope(resolved.name, resolved.text("scope"));
  const std::int64_t min_size = resolved.integer("min_size");
  if (min_size < 0) throw ConfigError(str_cat(resolved.name, ".min_size must be >= 0, got ", min_size));
  if (scope == Scope::Global && min_size == 0) {
    auto compressor = registry.create(resolved);
    compressor->set_layer_shapes(shapes);
    return compressor;
  }
  if (registry.traits(resolved).multi_round)
    throw ConfigError(str_cat(resolved.name, " works layer by layer by itself and keeps small ",
                              "layers dense; it takes neither scope nor min_size"));
  std::vector<std::size_t> layer_sizes;
  for (const LayerShape& shape : shapes) {
    std::size_t size = 1;
    for (std::size_t d : shape) size *= d;
    layer_sizes.push_back(size);
  }
  return std::make_unique<ScopedCompressor>(layer_sizes, scope, static_cast<std::size_t>(min_size),
                                            [&] { return registry.create(resolved); });
}

}  // namespace

std::unique_ptr<Compressor> build_compressor(const Registry<Compressor>& registry, const ComponentSpec& spec,
                                             const std::vector<LayerShape>& shapes, CompressorSeed seed) {
  auto compressor = build_unseeded(registry, spec, shapes);
  compressor->set_seed(seed.run_seed, seed.rank);
  return compressor;
}

std::vector<std::string> layer_separable_compressors(const Registry<Compressor>& registry) {
  std::vector<std::string> out;
  for (const ComponentInfo& info : registry.infos()) {
    try {
      const ComponentSpec spec{"compressor", info.name, {}};
      if (build_compressor(registry, spec, {LayerShape{64}}, {})->separable_by_layer()) out.push_back(info.name);
    } catch (const ConfigError&) {
      // a compressor with a field that has no default is not one of its defaults
    }
  }
  return out;
}

}  // namespace laconic::compress
