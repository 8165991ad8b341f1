#include "engine/compress/payload_header.hpp"

#include <string_view>

#include "engine/core/error.hpp"

namespace laconic::compress {

std::size_t read_element_count(const Payload& payload, std::size_t header_bytes, std::size_t expected,
                               const char* codec) {
  const bool vowel = std::string_view("aeiou").find(codec[0]) != std::string_view::npos;
  LACONIC_ENFORCE(payload.size() >= header_bytes, "expected ", vowel ? "an " : "a ", codec, " payload of at least ",
                  header_bytes, " bytes, got ", payload.size());
  std::uint32_t count;
  std::memcpy(&count, payload.data(), sizeof count);
  const std::size_t n = count;
  LACONIC_ENFORCE(n == expected, "expected a payload for ", expected, " elements, got one for ", n);
  return n;
}

}  // namespace laconic::compress
