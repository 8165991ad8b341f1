#include "engine/compress/bitpack_avx512.hpp"

#include <array>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
// GCC 12.2 warns that the "undefined" vector inside many AVX-512 intrinsics may be used
// uninitialized (GCC bug 105593): a false alarm about its own headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace laconic::compress::detail {

#if defined(__x86_64__) || defined(__i386__)

namespace {

// Eight groups of W bits x 8 values: 64 values in one vector of bytes, group g in 64-bit lane g,
// packed into the W low bytes of its lane, the lanes then made contiguous (and the reverse).
using Bytes = std::array<std::uint8_t, 64>;

// vpermb's index that takes the W low bytes of every 64-bit lane to 8 x W contiguous bytes.
template <unsigned W>
constexpr Bytes compact_index() {
  Bytes index{};
  for (unsigned k = 0; k < 8 * W; ++k) index[k] = static_cast<std::uint8_t>(8 * (k / W) + k % W);
  return index;
}

// And the reverse: lane g's bytes 0..7 from packed bytes W x g + 0..7 (W x 7 + 7 <= 63).
template <unsigned W>
constexpr Bytes spread_index() {
  Bytes index{};
  for (unsigned k = 0; k < 64; ++k) index[k] = static_cast<std::uint8_t>(W * (k / 8) + k % 8);
  return index;
}

// vpmultishiftqb's control: byte j of every lane from the lane's bits j x W and up.
template <unsigned W>
constexpr Bytes field_shifts() {
  Bytes shifts{};
  for (unsigned k = 0; k < 64; ++k) shifts[k] = static_cast<std::uint8_t>(W * (k % 8));
  return shifts;
}

template <unsigned W>
constexpr Bytes kCompact = compact_index<W>();
template <unsigned W>
constexpr Bytes kSpread = spread_index<W>();
template <unsigned W>
constexpr Bytes kFieldShifts = field_shifts<W>();

// The 8 x W bytes of eight groups.
template <unsigned W>
constexpr __mmask64 kGroupBytes = W == 8 ? ~__mmask64{0} : (__mmask64{1} << (8 * W)) - 1;

#define LACONIC_AVX512 gnu::target("avx512f,avx512bw,avx512vbmi")

template <unsigned W>
[[LACONIC_AVX512]] std::size_t pack_groups(const std::uint32_t* values, std::size_t groups, std::uint8_t* out) {
  const __m512i compact = _mm512_loadu_si512(kCompact<W>.data());
  const __m512i field = _mm512_set1_epi8(static_cast<char>((1u << W) - 1));
  const std::size_t blocks = groups / 8;
  for (std::size_t b = 0; b < blocks; ++b, values += 64, out += 8 * W) {
    // The low byte of each value, in order, then its low W bits.
    __m512i x = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(_mm512_loadu_si512(values)));
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(_mm512_loadu_si512(values + 16)), 1);
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(_mm512_loadu_si512(values + 32)), 2);
    x = _mm512_inserti32x4(x, _mm512_cvtepi32_epi8(_mm512_loadu_si512(values + 48)), 3);
    x = _mm512_and_si512(x, field);
    // Pairs of fields joined in 16-, 32- then 64-bit lanes: lane g ends with its group's 8 x W bits.
    x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi16(0x00FF)), _mm512_slli_epi16(_mm512_srli_epi16(x, 8), W));
    x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi32(0xFFFF)),
                        _mm512_slli_epi32(_mm512_srli_epi32(x, 16), 2 * W));
    x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi64(0xFFFFFFFF)),
                        _mm512_slli_epi64(_mm512_srli_epi64(x, 32), 4 * W));
    _mm512_mask_storeu_epi8(out, kGroupBytes<W>, _mm512_permutexvar_epi8(compact, x));
  }
  return 8 * blocks;
}

template <unsigned W>
[[LACONIC_AVX512]] std::size_t unpack_groups(const std::uint8_t* in, std::size_t groups, std::uint32_t* values) {
  const __m512i spread = _mm512_loadu_si512(kSpread<W>.data());
  const __m512i shifts = _mm512_loadu_si512(kFieldShifts<W>.data());
  const __m512i field = _mm512_set1_epi8(static_cast<char>((1u << W) - 1));
  const std::size_t blocks = groups / 8;
  for (std::size_t b = 0; b < blocks; ++b, in += 8 * W, values += 64) {
    // A masked load reads (and faults on) no byte past the eight groups.
    __m512i x = _mm512_permutexvar_epi8(spread, _mm512_maskz_loadu_epi8(kGroupBytes<W>, in));
    x = _mm512_and_si512(_mm512_multishift_epi64_epi8(shifts, x), field);
    _mm512_storeu_si512(values, _mm512_cvtepu8_epi32(_mm512_castsi512_si128(x)));
    _mm512_storeu_si512(values + 16, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(x, 1)));
    _mm512_storeu_si512(values + 32, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(x, 2)));
    _mm512_storeu_si512(values + 48, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(x, 3)));
  }
  return 8 * blocks;
}

#undef LACONIC_AVX512

using PackGroups = std::size_t (*)(const std::uint32_t*, std::size_t, std::uint8_t*);
using UnpackGroups = std::size_t (*)(const std::uint8_t*, std::size_t, std::uint32_t*);

// One instantiation per width 1..8, indexed by width - 1.
template <unsigned... I>
constexpr std::array<PackGroups, sizeof...(I)> pack_table(std::integer_sequence<unsigned, I...>) {
  return {&pack_groups<I + 1>...};
}
template <unsigned... I>
constexpr std::array<UnpackGroups, sizeof...(I)> unpack_table(std::integer_sequence<unsigned, I...>) {
  return {&unpack_groups<I + 1>...};
}
constexpr auto kPackGroups = pack_table(std::make_integer_sequence<unsigned, kAvx512MaxBits>{});
constexpr auto kUnpackGroups = unpack_table(std::make_integer_sequence<unsigned, kAvx512MaxBits>{});

}  // namespace

std::size_t pack_groups_avx512(const std::uint32_t* values, std::size_t groups, unsigned bits, std::uint8_t* out) {
  return kPackGroups[bits - 1](values, groups, out);
}

std::size_t unpack_groups_avx512(const std::uint8_t* in, std::size_t groups, unsigned bits, std::uint32_t* values) {
  return kUnpackGroups[bits - 1](in, groups, values);
}

#else  // no x86: best_isa() is never Isa::Avx512, so nothing calls these

std::size_t pack_groups_avx512(const std::uint32_t*, std::size_t, unsigned, std::uint8_t*) { return 0; }
std::size_t unpack_groups_avx512(const std::uint8_t*, std::size_t, unsigned, std::uint32_t*) { return 0; }

#endif

}  // namespace laconic::compress::detail
