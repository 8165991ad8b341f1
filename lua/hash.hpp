#pragma once
// A fingerprint of an experiment file, so that a changed file is noticed (not a security hash).
#include <string>
#include <string_view>

namespace laconic::lua {

/// 64-bit FNV-1a of the bytes, as 16 lowercase hex digits.
std::string fnv1a_hex(std::string_view bytes);

}  // namespace laconic::lua
