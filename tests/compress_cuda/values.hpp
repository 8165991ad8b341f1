#pragma once
// Inputs of the CUDA kernels' tests: awkward values, normal values, uniforms.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/compress/element_math.hpp"

namespace laconic::compress::test {

/// Normal values, then every awkward one: NaNs, infinities, subnormals, zeros of both signs,
/// fp16's largest and its overflow tie, values at rounding ties; 1003 in all (not a multiple of 8).
inline std::vector<float> awkward_values() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> v(960);
  for (float& x : v) x = normal(rng);
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), inf, -inf,
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(), 0.0f, -0.0f,
                  65504.0f, 65520.0f, -65520.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                  1.0f + std::ldexp(1.0f, -11), element::float_of(0x3F808000u), element::float_of(0x3F818000u)})
    v.push_back(x);
  while (v.size() < 1003) v.push_back(normal(rng) * 1e-6f);
  return v;
}

/// n normal values (a gradient's shape) from `seed`.
inline std::vector<float> normal_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

/// n uniforms in [0, 1) as the CPU codecs make them (element::uniform_of).
inline std::vector<float> uniforms(std::size_t n) {
  std::mt19937_64 rng(11);
  std::vector<float> u(n);
  for (float& x : u) x = element::uniform_of(rng());
  return u;
}

}  // namespace laconic::compress::test
