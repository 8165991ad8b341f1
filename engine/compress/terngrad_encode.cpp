#include "engine/compress/terngrad_encode.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/compress/element_math.hpp"

namespace laconic::compress {

namespace {

// Bit q of a 4-bit mask moved to bit 2q.
constexpr std::uint8_t spread(unsigned mask) {
  return static_cast<std::uint8_t>((mask & 1u) | ((mask & 2u) << 1) | ((mask & 4u) << 2) | ((mask & 8u) << 3));
}

// The byte of four codes by keep + 16 * negative (4-bit masks): code 1 (low bit) for a kept
// positive element, 2 (high bit) for a kept negative one. A table: one load instead of a dozen
// bit operations per byte.
struct CodeBytes {
  std::uint8_t by_masks[256];
  constexpr CodeBytes() : by_masks() {
    for (unsigned keep = 0; keep < 16; ++keep)
      for (unsigned negative = 0; negative < 16; ++negative)
        by_masks[keep + 16 * negative] =
            static_cast<std::uint8_t>(spread(keep & ~negative) | (spread(keep & negative) << 1));
  }
};
constexpr CodeBytes kCodeBytes;

#if defined(__SSE2__)
// The byte of codes of four elements from their uniforms.
inline std::uint8_t code_byte(__m128 values, __m128 draws, __m128 scales) {
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  const __m128 p = _mm_div_ps(_mm_and_ps(values, abs_mask), scales);
  const auto keep = static_cast<unsigned>(_mm_movemask_ps(_mm_cmplt_ps(draws, p)));
  const auto negative = static_cast<unsigned>(_mm_movemask_ps(values));
  return kCodeBytes.by_masks[keep + 16 * negative];
}
#endif

// Codes of elements [0, count) of `g`, count <= 256. The draws come first, so the coding loop has
// no chain through the generator, and it has no branches either: keep and sign are coin flips
// the predictor cannot learn.
void encode_block(const float* g, std::size_t count, float scale, Rng& rng, std::uint8_t* out) {
  constexpr std::size_t kMax = 256;
  // Rng::uniform() in two loops: the generator's 24 bits, then their conversion, exact either
  // way (a conversion inside the first loop would chain every draw to the last through its
  // register).
  std::int32_t bits[kMax];
  for (std::size_t j = 0; j < count; ++j) bits[j] = static_cast<std::int32_t>(rng.next() >> 40);
  float draws[kMax];
  for (std::size_t j = 0; j < count; ++j) draws[j] = static_cast<float>(bits[j]) * (1.0f / 16777216.0f);
  std::size_t b = 0;
#if defined(__SSE2__)
  const __m128 scales = _mm_set1_ps(scale);
  for (; 4 * b + 4 <= count; ++b) out[b] = code_byte(_mm_loadu_ps(g + 4 * b), _mm_loadu_ps(draws + 4 * b), scales);
#endif
  for (; 4 * b < count; ++b) {
    std::uint32_t byte = 0;
    for (std::size_t q = 0; q < 4 && 4 * b + q < count; ++q)
      byte |= element::terngrad_code(g[4 * b + q], scale, draws[4 * b + q]) << (2 * q);
    out[b] = static_cast<std::uint8_t>(byte);
  }
}

// One draw after another, in blocks of 256 (a multiple of 4: every block starts on a byte).
void encode_in_order(const float* g, std::size_t n, float scale, Rng& rng, std::uint8_t* out) {
  for (std::size_t first = 0; first < n; first += 256)
    encode_block(g + first, std::min<std::size_t>(256, n - first), scale, rng, out + first / 4);
}

#if defined(__x86_64__)
constexpr std::size_t kLanes = 4;
// Shorter gradients stay on the sequential loop: the lanes' advance (a matrix-vector product of 256
// bits per set bit of the stretch, the matrices built on a process's first long gradient) buys
// little there. A round figure, not a measured break-even.
constexpr std::size_t kLanesFrom = std::size_t{1} << 16;

// Four xoshiro256** generators (Rng::next, lane by lane) stepped at once: each lane's 24 high
// bits of its draw. x * 5 and x * 9 as shifts and adds: AVX2 has no 64-bit multiply.
struct LaneStates {
  __m256i s0, s1, s2, s3;

  [[gnu::target("avx2")]] __m256i next24() {
    const __m256i times5 = _mm256_add_epi64(s1, _mm256_slli_epi64(s1, 2));
    const __m256i rotated = _mm256_or_si256(_mm256_slli_epi64(times5, 7), _mm256_srli_epi64(times5, 57));
    const __m256i result = _mm256_add_epi64(rotated, _mm256_slli_epi64(rotated, 3));
    const __m256i t = _mm256_slli_epi64(s1, 17);
    s2 = _mm256_xor_si256(s2, s0);
    s3 = _mm256_xor_si256(s3, s1);
    s1 = _mm256_xor_si256(s1, s2);
    s0 = _mm256_xor_si256(s0, s3);
    s2 = _mm256_xor_si256(s2, t);
    s3 = _mm256_or_si256(_mm256_slli_epi64(s3, 45), _mm256_srli_epi64(s3, 19));
    return _mm256_srli_epi64(result, 40);
  }
};

[[gnu::target("avx2")]] LaneStates load_lanes(const Rng (&rngs)[kLanes]) {
  __m256i words[4];
  for (int w = 0; w < 4; ++w) {
    alignas(32) std::uint64_t by_lane[kLanes];
    for (std::size_t c = 0; c < kLanes; ++c) by_lane[c] = rngs[c].state_words()[w];
    words[w] = _mm256_load_si256(reinterpret_cast<const __m256i*>(by_lane));
  }
  return {words[0], words[1], words[2], words[3]};
}

[[gnu::target("avx2")]] void store_lanes(const LaneStates& lanes, Rng (&rngs)[kLanes]) {
  const __m256i words[4] = {lanes.s0, lanes.s1, lanes.s2, lanes.s3};
  for (int w = 0; w < 4; ++w) {
    alignas(32) std::uint64_t by_lane[kLanes];
    _mm256_store_si256(reinterpret_cast<__m256i*>(by_lane), words[w]);
    for (std::size_t c = 0; c < kLanes; ++c) rngs[c].state_words()[w] = by_lane[c];
  }
}

// Four draws of every lane as uniforms, lane c's in draws[c] in the order drawn.
[[gnu::target("avx2")]] void next_four_uniforms(LaneStates& lanes, __m128 (&draws)[kLanes]) {
  const __m256i r0 = lanes.next24(), r1 = lanes.next24(), r2 = lanes.next24(), r3 = lanes.next24();
  // 32-bit words lane by lane: r01 holds (r0, r1) of lane c in its 64-bit element c, r23 (r2, r3).
  const __m256i r01 = _mm256_or_si256(r0, _mm256_slli_epi64(r1, 32));
  const __m256i r23 = _mm256_or_si256(r2, _mm256_slli_epi64(r3, 32));
  const __m256 scale = _mm256_set1_ps(1.0f / 16777216.0f);
  // Per 128-bit half: the low elements give lanes 0 and 2 their (r0, r1, r2, r3), the high ones 1 and 3.
  const __m256 lanes02 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_unpacklo_epi64(r01, r23)), scale);
  const __m256 lanes13 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_unpackhi_epi64(r01, r23)), scale);
  draws[0] = _mm256_castps256_ps128(lanes02);
  draws[1] = _mm256_castps256_ps128(lanes13);
  draws[2] = _mm256_extractf128_ps(lanes02, 1);
  draws[3] = _mm256_extractf128_ps(lanes13, 1);
}

// Lane c codes elements [c * chunk, (c + 1) * chunk), the last lane up to n; each starts its
// generator where the sequence is at its first element (Rng::advance). The lanes step together
// while every one has four elements left; each finishes its rest alone.
[[gnu::target("avx2")]] void encode_in_lanes(const float* g, std::size_t n, float scale, Rng& rng, std::uint8_t* out) {
  const std::size_t chunk = ((n + kLanes - 1) / kLanes + 3) / 4 * 4;  // whole bytes
  Rng rngs[kLanes] = {rng, rng, rng, rng};
  for (std::size_t c = 1; c < kLanes; ++c) {
    rngs[c] = rngs[c - 1];
    rngs[c].advance(chunk);
  }
  const std::size_t last = n - (kLanes - 1) * chunk;  // the last lane's elements, the fewest
  LaneStates lanes = load_lanes(rngs);
  const __m128 scales = _mm_set1_ps(scale);
  std::size_t j = 0;
  for (; j + 4 <= last; j += 4) {
    __m128 draws[kLanes];
    next_four_uniforms(lanes, draws);
    for (std::size_t c = 0; c < kLanes; ++c) {
      const std::size_t i = c * chunk + j;
      out[i / 4] = code_byte(_mm_loadu_ps(g + i), draws[c], scales);
    }
  }
  store_lanes(lanes, rngs);
  for (std::size_t c = 0; c < kLanes; ++c) {
    const std::size_t begin = c * chunk + j, end = c + 1 < kLanes ? (c + 1) * chunk : n;
    encode_in_order(g + begin, end - begin, scale, rngs[c], out + begin / 4);
  }
  rng = rngs[kLanes - 1];
}
#endif

}  // namespace

void encode_terngrad_codes(std::span<const float> g, float scale, Rng& rng, Isa isa, std::uint8_t* out) {
  // A local copy: byte stores into the payload may alias any member, which would force the
  // generator's state through memory on every draw.
  Rng local = rng;
#if defined(__x86_64__)
  if (isa >= Isa::Avx2 && g.size() >= kLanesFrom)
    encode_in_lanes(g.data(), g.size(), scale, local, out);
  else
#endif
    encode_in_order(g.data(), g.size(), scale, local, out);
  rng = local;
}

}  // namespace laconic::compress
