#include "engine/compress/builtin.hpp"

#include "engine/compress/none.hpp"
#include "engine/compress/topk.hpp"

namespace laconic::compress {

Registry<Compressor> builtin_compressors() {
  Registry<Compressor> r("compressor");
  r.add<NoneCompressor, NoneOptions>("none", "no compression: fp32 gradients, summed by allreduce");
  r.add<TopkCompressor, TopkOptions>(
      "topk", "sends the k = ceil(ratio*n) largest-magnitude entries as (index, value) pairs");
  return r;
}

}  // namespace laconic::compress
