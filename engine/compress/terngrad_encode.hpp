#pragma once
// TernGrad's coding loop, apart from the codec (terngrad.cpp): one draw after another from the
// codec's generator, or, with AVX2 on long gradients, four stretches of the same sequence drawn
// side by side. Both write the same bytes.
#include <cstdint>
#include <span>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/random.hpp"

namespace laconic::compress {

/// Writes the 2-bit codes of `g` from `out` on, four to a byte, lowest bits first: element i gets
/// 1 or 2 (by its sign) when the i-th draw of `rng`, as Rng::uniform() makes it, is below
/// |g_i| / scale, else 0. Leaves `rng` g.size() draws on. `scale` is positive and finite.
void encode_terngrad_codes(std::span<const float> g, float scale, Rng& rng, Isa isa, std::uint8_t* out);

}  // namespace laconic::compress
