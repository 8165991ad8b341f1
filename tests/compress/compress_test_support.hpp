#pragma once
// Helpers shared by the compressor tests.
#include <catch2/catch.hpp>

#include <random>
#include <span>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/compressor.hpp"

namespace laconic::testing {

/// n standard-normal floats, reproducible for a seed.
inline std::vector<float> random_gradient(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(n);
  for (auto& v : g) v = normal(rng);
  return g;
}

/// The dense vector a payload decodes to.
inline std::vector<float> decode(const compress::Compressor& c, const compress::Payload& p, std::size_t n) {
  std::vector<float> dense(n, 0.0f);
  c.decompress_add(p, dense);
  return dense;
}

/// The instruction sets this CPU runs, baseline first; says which loops could not be checked here.
inline std::vector<compress::Isa> isas_on_this_cpu() {
  using compress::Isa;
  std::vector<Isa> isas;
  for (Isa isa : {Isa::Baseline, Isa::Avx2, Isa::Avx512}) {
    if (compress::runs_on_this_cpu(isa))
      isas.push_back(isa);
    else
      WARN("skipped: this CPU has no " << compress::isa_name(isa) << ", so its loops were not run");
  }
  return isas;
}

}  // namespace laconic::testing
