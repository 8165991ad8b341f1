#include "engine/compress/threshold.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/compress/bitpack.hpp"
#include "engine/compress/error_feedback.hpp"
#include "engine/compress/sparse_pairs.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<ThresholdOptions> ThresholdOptions::fields() {
  using O = ThresholdOptions;
  return OptionFields<O>()
      .number("tau", &O::tau, "an element is sent when its magnitude (after error correction) exceeds tau",
              finite_above(0))
      .flag("error_feedback", &O::error_feedback, "accumulate what was not sent and add it to the next gradient");
}

std::size_t threshold_payload_bytes(std::size_t count) { return sparse_pairs_bytes(count); }

ThresholdCodec::ThresholdCodec(double tau, Isa isa) : isa_(isa) {
  LACONIC_ENFORCE(runs_on_this_cpu(isa), "threshold's ", isa_name(isa), " loops need a CPU with ", isa_name(isa));
  LACONIC_ENFORCE(tau > 0.0, "threshold tau must be > 0, got ", tau);
  constexpr float kMax = std::numeric_limits<float>::max();
  if (tau >= static_cast<double>(kMax)) {
    tau_below_ = kMax;
  } else {
    tau_below_ = static_cast<float>(tau);
    if (static_cast<double>(tau_below_) > tau) tau_below_ = std::nextafter(tau_below_, 0.0f);
  }
}

namespace {

// Elements per block of the branch-free pass: a block is written without branches only while at
// least this many sent entries are still to come, so that its stores stay inside the payload.
constexpr std::size_t kBlock = 256;

bool sent(float v, float tau) { return !(std::fabs(v) <= tau); }  // negated so that NaN is sent

// The elements pairs are written from: error feedback's residual, which the writers change when
// they take the sent elements off it (kTake), or the gradient, which they only read.
template <bool kTake>
using Elements = std::conditional_t<kTake, float*, const float*>;

// What error feedback keeps of a sent element: the residual less its decoded value, which is the
// element itself, bit for bit as the generic passes leave it (flip(flip(v) + v), flip toggling
// the sign): -0 for a finite element, NaN for an infinite one, and a NaN quieted as it was: the
// generic passes add the decoded value to the negated residual, and x86 returns the first
// operand's NaN. Spelled out, since a compiler may swap the operands of v + flip(v).
constexpr std::uint32_t kQuietBit = 0x00400000u;
float kept_of_sent(float v) {
  if (v != v) return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | kQuietBit);
  return minus_decoded(v, v);
}

// Writes the pairs of block [first, first + kBlock) from entry `at` on, storing every element
// and advancing by 0 or 1 (elements above tau come at random: a branch would mispredict);
// returns the next entry. With kTake, g is error feedback's residual and each sent element is
// taken off it (kept_of_sent) in the same pass.
template <bool kTake>
std::size_t write_block(Elements<kTake> g, std::size_t first, float tau, std::uint8_t* indices, std::uint8_t* values,
                        std::size_t at) {
  for (std::size_t j = first; j < first + kBlock; ++j) {
    const auto index = static_cast<std::uint32_t>(j);
    const float v = g[j];
    std::memcpy(indices + 4 * at, &index, 4);
    std::memcpy(values + 4 * at, &v, 4);
    const bool is_sent = sent(v, tau);
    if constexpr (kTake) g[j] = is_sent ? kept_of_sent(v) : v;
    at += is_sent ? 1 : 0;
  }
  return at;
}

#if defined(__x86_64__)
// For each 8-bit mask, the lanes whose bit is set, lowest first (then zeros): AVX2's left-pack.
struct LeftPack {
  std::uint32_t lanes[256][8] = {};
  constexpr LeftPack() {
    for (unsigned mask = 0; mask < 256; ++mask)
      for (unsigned lane = 0, at = 0; lane < 8; ++lane)
        if ((mask >> lane) & 1u) lanes[mask][at++] = lane;
  }
};
constexpr LeftPack kLeftPack;

// write_block eight elements at a time: the sent ones' indices and values moved to the front
// of a vector and stored whole (eight slots, the unused ones overwritten later).
template <bool kTake>
[[gnu::target("avx2")]] std::size_t write_block_avx2(Elements<kTake> g, std::size_t first, float tau,
                                                     std::uint8_t* indices, std::uint8_t* values, std::size_t at) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256 quiet = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kQuietBit)));
  const __m256 limit = _mm256_set1_ps(tau);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (std::size_t j = first; j < first + kBlock; j += 8) {
    const __m256 v = _mm256_loadu_ps(g + j);
    // !(|v| <= tau), true for NaN: "not less or equal, unordered".
    const __m256 is_sent = _mm256_cmp_ps(_mm256_and_ps(v, abs_mask), limit, _CMP_NLE_UQ);
    const auto mask = static_cast<unsigned>(_mm256_movemask_ps(is_sent));
    const __m256i order = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLeftPack.lanes[mask]));
    const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(j)), lane);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(indices + 4 * at), _mm256_permutevar8x32_epi32(index, order));
    _mm256_storeu_ps(reinterpret_cast<float*>(values + 4 * at), _mm256_permutevar8x32_ps(v, order));
    if constexpr (kTake) {  // kept_of_sent, lane by lane
      const __m256 arithmetic = _mm256_xor_ps(_mm256_add_ps(_mm256_xor_ps(v, sign), v), sign);
      const __m256 quieted = _mm256_or_ps(v, quiet);
      const __m256 kept = _mm256_blendv_ps(arithmetic, quieted, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      _mm256_storeu_ps(g + j, _mm256_blendv_ps(v, kept, is_sent));
    }
    at += static_cast<std::size_t>(__builtin_popcount(mask));
  }
  return at;
}
#endif

// Fills the payload's `count` pairs from the elements of `g` above tau, in index order; with
// kTake, takes them off `g` (error feedback's residual) too.
template <bool kTake>
void write_pairs(Elements<kTake> g, std::size_t n, float tau, Isa isa, std::size_t count, std::uint8_t* indices,
                 std::uint8_t* values) {
  auto block = write_block<kTake>;
#if defined(__x86_64__)
  if (isa >= Isa::Avx2) block = write_block_avx2<kTake>;
#else
  (void)isa;
#endif
  std::size_t at = 0, i = 0;
  for (; i + kBlock <= n && count - at >= kBlock; i += kBlock) at = block(g, i, tau, indices, values, at);
  for (; i < n; ++i)
    if (sent(g[i], tau)) {
      const auto index = static_cast<std::uint32_t>(i);
      std::memcpy(indices + 4 * at, &index, 4);
      std::memcpy(values + 4 * at, &g[i], 4);
      if constexpr (kTake) g[i] = kept_of_sent(g[i]);
      ++at;
    }
}

// Sizes the payload for `count` entries of `n` elements and fills in its pairs (write_pairs).
template <bool kTake>
void encode(Elements<kTake> g, std::size_t n, float tau, Isa isa, std::size_t count, Payload& payload) {
  payload.resize(threshold_payload_bytes(count));
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(count)};
  std::memcpy(payload.data(), header, sizeof header);
  write_pairs<kTake>(g, n, tau, isa, count, payload.data() + 8, payload.data() + 8 + 4 * count);
}

void enforce_threshold_count(std::size_t n) {
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "threshold handles at most 2^32-1 elements, got ", n);
}

}  // namespace

// Two passes and no scratch: count, then write each pair in its place.
void ThresholdCodec::compress(std::span<const float> gradient, Payload& payload) {
  enforce_threshold_count(gradient.size());
  std::size_t count = 0;
  for (float v : gradient) count += sent(v, tau_below_) ? 1 : 0;
  encode<false>(gradient.data(), gradient.size(), tau_below_, isa_, count, payload);
}

void ThresholdCodec::compress_with_feedback(std::span<const float> gradient, std::span<float> residual,
                                            Payload& payload) {
  enforce_threshold_count(gradient.size());
  LACONIC_ENFORCE(gradient.size() == residual.size(), "expected a gradient of ", residual.size(), " elements, got ",
                  gradient.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < residual.size(); ++i) {
    residual[i] += gradient[i];
    count += sent(residual[i], tau_below_) ? 1 : 0;
  }
  encode<true>(residual.data(), residual.size(), tau_below_, isa_, count, payload);
}

void ThresholdCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  add_sparse_pairs(payload, dense, "threshold");
}

}  // namespace laconic::compress
