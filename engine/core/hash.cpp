#include "engine/core/hash.hpp"

namespace laconic {

std::string Fnv1a::hex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  std::uint64_t rest = hash_;
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[rest & 0xf];
    rest >>= 4;
  }
  return out;
}

}  // namespace laconic
