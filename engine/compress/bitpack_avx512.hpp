#pragma once
// pack_bits_to()/unpack_bits_from()'s loops for AVX-512 (F, BW and VBMI): eight groups of eight
// values, 8 x bits bytes, at once, for widths of at most 8 bits. Only for a CPU where
// best_isa() is Isa::Avx512; the bytes are those of the plain loops (bitpack_test checks).
#include <cstddef>
#include <cstdint>

namespace laconic::compress::detail {

/// Widths these loops handle.
inline constexpr unsigned kAvx512MaxBits = 8;

/// Packs the first 8 x (groups / 8) groups of values[] (bits <= kAvx512MaxBits) to out and
/// returns how many groups that was; writes no byte past them.
std::size_t pack_groups_avx512(const std::uint32_t* values, std::size_t groups, unsigned bits, std::uint8_t* out);

/// The inverse: unpacks the first 8 x (groups / 8) groups of in[] into values and returns how
/// many groups that was; reads no byte past them.
std::size_t unpack_groups_avx512(const std::uint8_t* in, std::size_t groups, unsigned bits, std::uint32_t* values);

}  // namespace laconic::compress::detail
