#pragma once
// A fingerprint of bytes (an experiment file, a decoded split's key), so that a change is noticed
// (not a security hash).
#include <string>
#include <string_view>

namespace laconic {

/// 64-bit FNV-1a of the bytes, as 16 lowercase hex digits.
std::string fnv1a_hex(std::string_view bytes);

}  // namespace laconic
