#include "engine/compress/terngrad.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/compress/bitpack.hpp"
#include "engine/compress/element_math.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/compress/terngrad_encode.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<TerngradOptions> TerngradOptions::fields() {
  return OptionFields<TerngradOptions>().flag("error_feedback", &TerngradOptions::error_feedback,
                                              "accumulate the ternarization error and add it to the next gradient");
}

std::size_t terngrad_payload_bytes(std::size_t n) { return 8 + packed_bytes(n, 2); }

TerngradCodec::TerngradCodec(Isa isa) : PrivateStreamCodec(streams::kTerngradRounding), isa_(isa) {
  LACONIC_ENFORCE(runs_on_this_cpu(isa), "terngrad's ", isa_name(isa), " loops need a CPU with ", isa_name(isa));
}

namespace {

// max |g| and whether any element is NaN. The maximum ignores NaNs (a NaN is never > scale),
// which SSE2's maxps does lane by lane; the largest value is the same in any order.
std::pair<float, bool> scale_of(std::span<const float> gradient) {
  float scale = 0.0f;
  bool nan = false;
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  __m128 largest = _mm_setzero_ps(), unordered = _mm_setzero_ps();
  for (; i + 4 <= gradient.size(); i += 4) {
    const __m128 m = _mm_and_ps(_mm_loadu_ps(gradient.data() + i), abs_mask);
    largest = _mm_max_ps(m, largest);  // m > largest ? m : largest
    unordered = _mm_or_ps(unordered, _mm_cmpunord_ps(m, m));
  }
  float lanes[4];
  _mm_storeu_ps(lanes, largest);
  for (float m : lanes) scale = m > scale ? m : scale;
  nan = _mm_movemask_ps(unordered) != 0;
#endif
  for (; i < gradient.size(); ++i) {
    const float m = std::fabs(gradient[i]);
    scale = m > scale ? m : scale;
    nan = nan || m != m;
  }
  return {scale, nan};
}

}  // namespace

void TerngradCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "terngrad handles at most ", "2^32-1 elements, got ",
                  n);
  auto [scale, nan] = scale_of(gradient);
  if (nan) scale = std::numeric_limits<float>::quiet_NaN();

  payload.resize(terngrad_payload_bytes(n));
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &scale, 4);
  std::uint8_t* codes = payload.data() + 8;
  if (!(scale > 0.0f && std::isfinite(scale))) {
    std::memset(codes, 0, payload.size() - 8);
    return;
  }
  encode_terngrad_codes(gradient, scale, rng_, isa_, codes);
}

void TerngradCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 8, dense.size(), "terngrad");
  const float scale = header_float(payload, 4);
  LACONIC_ENFORCE(payload.size() == terngrad_payload_bytes(n), "expected ", terngrad_payload_bytes(n),
                  " terngrad payload bytes for ", n, " elements, got ", payload.size());
  const std::uint8_t* codes = payload.data() + 8;
  auto code_at = [codes](std::size_t i) { return (codes[i / 4] >> (2 * (i % 4))) & 3u; };
  // Every code checked before any is used: a byte holds a 3 where two neighbouring bits are set.
  unsigned threes = 0;
  for (std::size_t b = 0; b < n / 4; ++b) threes |= codes[b] & (codes[b] >> 1) & 0x55u;
  for (std::size_t i = n / 4 * 4; i < n; ++i) threes |= code_at(i) == 3 ? 1u : 0u;
  if (threes != 0)
    for (std::size_t i = 0; i < n; ++i) LACONIC_ENFORCE(code_at(i) != 3, "invalid terngrad code 3 for element ", i);
  // scale * 0 rather than a plain 0 for code 0: an inf or NaN scale reaches every element.
  const float values[4] = {element::terngrad_value(0, scale), element::terngrad_value(1, scale),
                           element::terngrad_value(2, scale), 0.0f};
  std::size_t i = 0;
#if defined(__SSE2__)
  // Four elements a byte: the byte's four values from a table built for this scale (worth its
  // 256 entries on long vectors only).
  if (n >= 4096) {
    __m128 by_byte[256];
    for (unsigned byte = 0; byte < 256; ++byte)
      by_byte[byte] =
          _mm_setr_ps(values[byte & 3u], values[(byte >> 2) & 3u], values[(byte >> 4) & 3u], values[(byte >> 6) & 3u]);
    for (; i + 4 <= n; i += 4)
      _mm_storeu_ps(dense.data() + i, _mm_add_ps(_mm_loadu_ps(dense.data() + i), by_byte[codes[i / 4]]));
  }
#endif
  for (; i < n; ++i) dense[i] += values[code_at(i)];
}

}  // namespace laconic::compress
