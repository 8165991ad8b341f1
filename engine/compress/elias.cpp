#include "engine/compress/elias.hpp"

#include "engine/core/error.hpp"

namespace laconic::compress::detail {

void throw_elias_zero() { throw InvariantError("Elias gamma codes values >= 1, got 0"); }

void throw_elias_too_large() { throw InvariantError("Elias codes non-negative values below 2^64-1, got 2^64-1"); }

void throw_elias_overlong(std::uint64_t bits_read) {
  throw InvariantError(
      str_cat("an Elias gamma code with more than 63 leading zeros at bit ", bits_read, " is not a 64-bit value"));
}

// BitWriter/BitReader move at most 32 bits per call; these codes have up to 127.
void write_elias_gamma_wide(BitWriter& writer, std::uint64_t x, unsigned n) {
  // n zeros, then the one, then the n low bits, 32 at a time.
  writer.write(0, n > 32 ? 32 : n);
  if (n > 32) writer.write(0, n - 32);
  writer.write(1, 1);
  const std::uint64_t low = x & ((std::uint64_t{1} << n) - 1);
  writer.write(static_cast<std::uint32_t>(low), n > 32 ? 32 : n);
  if (n > 32) writer.write(static_cast<std::uint32_t>(low >> 32), n - 32);
}

std::uint64_t read_elias_gamma_wide(BitReader& reader, unsigned n) {
  const std::uint64_t low = reader.read(32);
  const std::uint64_t high = reader.read(n - 32);
  return (std::uint64_t{1} << n) | low | (high << 32);
}

}  // namespace laconic::compress::detail
