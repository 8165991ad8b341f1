#include "engine/core/hash.hpp"

#include <cstdint>

namespace laconic {

std::string fnv1a_hex(std::string_view bytes) {
  // Constants of FNV-1a 64 (Fowler, Noll, Vo).
  constexpr std::uint64_t kOffsetBasis = 14695981039346656037ull;
  constexpr std::uint64_t kPrime = 1099511628211ull;
  std::uint64_t hash = kOffsetBasis;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= kPrime;
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[hash & 0xf];
    hash >>= 4;
  }
  return out;
}

}  // namespace laconic
