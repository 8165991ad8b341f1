#pragma once
// Elias gamma codes (Elias 1975) on top of BitWriter/BitReader, as QSGD uses them for its levels
// (Alistarh et al. 2017, "Elias coding"). The code of x >= 1 with N = floor(log2 x) is N zero
// bits, a one bit, then the N bits of x below its leading one (as one LSB-first N-bit value):
// 2N + 1 bits, prefix-free, and shortest for small x. The coders are inline: QSGD calls them
// once per element.
#include <bit>
#include <cstdint>

#include "engine/compress/bitpack.hpp"

namespace laconic::compress {

namespace detail {
// Out of line, so that the inline coders stay small. All throw InvariantError.
[[noreturn]] void throw_elias_zero();
[[noreturn]] void throw_elias_too_large();
[[noreturn]] void throw_elias_overlong(std::uint64_t bits_read);
// Codes of 32 bits and more, which move in several BitWriter/BitReader calls.
void write_elias_gamma_wide(BitWriter& writer, std::uint64_t x, unsigned n);
std::uint64_t read_elias_gamma_wide(BitReader& reader, unsigned n);

inline unsigned floor_log2(std::uint64_t x) { return static_cast<unsigned>(63 - std::countl_zero(x)); }
}  // namespace detail

/// Bits of the Elias gamma code of x (x >= 1): 2 * floor(log2 x) + 1.
inline unsigned elias_gamma_bits(std::uint64_t x) {
  if (x == 0) [[unlikely]]
    detail::throw_elias_zero();
  return 2 * detail::floor_log2(x) + 1;
}

/// Appends the Elias gamma code of x (x >= 1; InvariantError for 0).
inline void write_elias_gamma(BitWriter& writer, std::uint64_t x) {
  if (x == 0) [[unlikely]]
    detail::throw_elias_zero();
  const unsigned n = detail::floor_log2(x);
  if (n > 15) [[unlikely]] {
    detail::write_elias_gamma_wide(writer, x, n);
    return;
  }
  // One write: n zeros, the one at bit n, the low n bits of x above it.
  const auto low = static_cast<std::uint32_t>(x) & ((1u << n) - 1);
  writer.write((low << (n + 1)) | (1u << n), 2 * n + 1);
}

/// Reads one Elias gamma code (a value >= 1). InvariantError past the end of the buffer or for
/// a code longer than any 64-bit value has.
inline std::uint64_t read_elias_gamma(BitReader& reader) {
  unsigned n = 0;
  while (reader.read(1) == 0)
    if (++n > 63) [[unlikely]]
      detail::throw_elias_overlong(reader.bits_read());
  if (n > 32) [[unlikely]]
    return detail::read_elias_gamma_wide(reader, n);
  return (std::uint64_t{1} << n) | reader.read(n);
}

/// Bits of the code of a non-negative v: elias_gamma_bits(v + 1); v < 2^64 - 1.
inline unsigned elias_bits(std::uint64_t v) {
  if (v + 1 == 0) [[unlikely]]
    detail::throw_elias_too_large();
  return elias_gamma_bits(v + 1);
}

/// Appends the gamma code of v + 1, for non-negative values (counts, levels) including 0;
/// v < 2^64 - 1.
inline void write_elias(BitWriter& writer, std::uint64_t v) {
  if (v + 1 == 0) [[unlikely]]
    detail::throw_elias_too_large();
  write_elias_gamma(writer, v + 1);
}

/// Reads a value written by write_elias.
inline std::uint64_t read_elias(BitReader& reader) { return read_elias_gamma(reader) - 1; }

}  // namespace laconic::compress
