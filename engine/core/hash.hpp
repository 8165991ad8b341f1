#pragma once
// Fingerprints of bytes (an experiment file, a run's configuration, a model's weights, a
// database's path), so that a change is noticed: 64-bit FNV-1a (Fowler, Noll, Vo), not a
// security hash. One hasher, fed piece by piece, for every fingerprint laconic takes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace laconic {

class Fnv1a {
 public:
  /// FNV-1a 64's offset basis.
  static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ull;
  /// Not FNV-1a's: the offset basis with its last digit lost, which laconic started from before
  /// it had one hasher. Kept only where such values are on disk (checkpoints' configuration
  /// fingerprints, journals' names), so that files written before stay readable.
  static constexpr std::uint64_t kTruncatedBasis = 1469598103934665603ull;
  static constexpr std::uint64_t kPrime = 1099511628211ull;

  explicit Fnv1a(std::uint64_t start = kOffsetBasis) : hash_(start) {}
  Fnv1a& add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * kPrime;
    return *this;
  }
  Fnv1a& add(std::string_view bytes) { return add(bytes.data(), bytes.size()); }
  std::uint64_t value() const { return hash_; }
  /// 16 lowercase hex digits.
  std::string hex() const;

 private:
  std::uint64_t hash_;
};

/// 64-bit FNV-1a of the bytes, as 16 lowercase hex digits.
inline std::string fnv1a_hex(std::string_view bytes) { return Fnv1a().add(bytes).hex(); }

}  // namespace laconic
