#pragma once
// A small, fast, reproducible generator for compressors (stochastic rounding, random selection).
// xoshiro256** (Blackman & Vigna 2018), seeded through splitmix64; identical on every platform,
// unlike the standard distributions.
#include <cstdint>

namespace laconic::compress {

/// splitmix64: mixes a 64-bit value; used to derive seeds (run seed, rank, step) and to seed Rng.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A seed for stream `stream` of run `run_seed`: mix64(run_seed ^ mix64(stream)).
constexpr std::uint64_t derive_seed(std::uint64_t run_seed, std::uint64_t stream) {
  return mix64(run_seed ^ mix64(stream));
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    for (auto& s : state_) {
      seed = mix64(seed);
      s = seed;
    }
  }

  /// 64 uniformly random bits.
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 24 random bits (exact in float).
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

  /// Uniform integer in [0, bound) (bound > 0), by Lemire's multiply-shift (bias < 2^-32 for
  /// bounds below 2^32).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next() >> 32) * bound) >> 32);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace laconic::compress
