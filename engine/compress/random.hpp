#pragma once
// A small, fast, reproducible generator for compressors (stochastic rounding, random selection).
// xoshiro256** (Blackman & Vigna 2018), seeded through splitmix64; identical on every platform,
// unlike the standard distributions.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

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

/// The streams laconic draws from, by what draws them: derive_seed(run_seed, stream) (plus the
/// rank for a worker's private stream). A number only has to differ from the other streams of
/// the same run seed. Every compressor has a run seed of its own: chain's children, scope's
/// segments, a parameter server's shards and an overlapped exchange's buckets get theirs from
/// the streams below. So terngrad's and adaptive's 2000, in two compressors, draw different
/// numbers; both keep the value they had before this list, so that runs repeat bit for bit.
namespace streams {
inline constexpr std::uint64_t kQsgdRounding = 1000;                      ///< + rank: stochastic rounding
inline constexpr std::uint64_t kTerngradRounding = 2000;                  ///< + rank
inline constexpr std::uint64_t kAdaptiveSample = 2000;                    ///< + rank: the entropy sample
inline constexpr std::uint64_t kDgcSample = 3000;                         ///< + rank: the threshold sample
inline constexpr std::uint64_t kRandomkPrivate = std::uint64_t{1} << 32;  ///< + rank, when not shared
inline constexpr std::uint64_t kPowerSgd = 0x9053d;                       ///< the shared initial Q matrices
inline constexpr std::uint64_t kChainFirst = 1;                           ///< chain's first child's run seed
inline constexpr std::uint64_t kChainSecond = 2;                          ///< and its second's
inline constexpr std::uint64_t kScopeSegment = 0x5e9;                     ///< + segment: scope = "layer" segments
inline constexpr std::uint64_t kServerShard = 0x5e7e;  ///< + shard: a parameter server's shard compressors
inline constexpr std::uint64_t kServerPull = 0x9011;   ///< + shard: asynchronous pull compressors
inline constexpr std::uint64_t kBucket = 0xb0c4e7;     ///< + bucket: an overlapped exchange's buckets
inline constexpr std::uint64_t kStraggler = 0x5710;    ///< + rank: a straggler's delays
inline constexpr std::uint64_t kFragment = 0xf4a9;     ///< + fragment: Streaming DiLoCo's fragment compressors
inline constexpr std::uint64_t kQuantizedRounding = 4000;  ///< + rank: quantized_allreduce's stochastic rounding
}  // namespace streams

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    for (auto& s : state_) {
      seed = mix64(seed);
      s = seed;
    }
  }

  /// The four state words, for checkpoints.
  std::span<std::uint64_t> state_words() { return state_; }
  std::span<const std::uint64_t> state_words() const { return state_; }

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

  /// Moves the generator `steps` draws ahead, to where `steps` calls of next() would leave it, in
  /// a few microseconds whatever `steps` is (steps < 2^40). The state update is linear over GF(2),
  /// so `steps` updates are one 256 x 256 bit matrix: a product of the update's matrix squared
  /// again and again, one square per set bit of `steps` (built once per process, as needed).
  /// Lets several generators draw disjoint stretches of one sequence side by side.
  void advance(std::uint64_t steps);

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

/// UniformStream's vectors of 16 or 32 bytes: 64-bit words, and the 32-bit integers and floats
/// their uniforms become (a vector size that depends on a template parameter is not one GCC's
/// __builtin_convertvector takes, so each width is spelled out).
template <std::size_t Bytes>
struct LaneVectors;
template <>
struct LaneVectors<16> {
  using Words = std::uint64_t __attribute__((vector_size(16)));
  using Ints = std::int32_t __attribute__((vector_size(8)));
  using Floats = float __attribute__((vector_size(8)));
};
template <>
struct LaneVectors<32> {
  using Words = std::uint64_t __attribute__((vector_size(32)));
  using Ints = std::int32_t __attribute__((vector_size(16)));
  using Floats = float __attribute__((vector_size(16)));
};
template <>
struct LaneVectors<64> {
  using Words = std::uint64_t __attribute__((vector_size(64)));
  using Ints = std::int32_t __attribute__((vector_size(32)));
  using Floats = float __attribute__((vector_size(32)));
};

/// Uniform floats in [0, 1) in bulk for stochastic rounding: eight interleaved xoshiro256+
/// generators (Blackman & Vigna 2018), each 64-bit draw giving two 24-bit uniforms (bits 40..63
/// and 16..39; the weak low bits of the "+" variant are dropped). The lanes are arrays the
/// compiler vectorizes, with integer operations only, so the values are the same on every
/// platform and vector width. About ten times the rate of Rng::uniform().
class UniformStream {
 public:
  /// Generators updated side by side.
  static constexpr std::size_t kLanes = 8;
  /// Uniforms one step of all lanes yields; fill() hands them out in whole blocks.
  static constexpr std::size_t kBlock = 2 * kLanes;

  explicit UniformStream(std::uint64_t seed = 1) { reseed(seed); }

  /// The 32 state words are consecutive mix64 outputs starting from `seed`, as in Rng.
  void reseed(std::uint64_t seed) {
    for (auto& word : state_)
      for (auto& lane : word) {
        seed = mix64(seed);
        lane = seed;
      }
  }

  /// Writes `count` uniforms (a multiple of kBlock) to `out`. Block b holds, for lane l, the
  /// high uniform of that lane's draw at out[16b + l] and the middle one at out[16b + 8 + l].
  /// Always inlined, so that a caller compiled for a wider instruction set gets it compiled so.
  /// GCC vector extensions: the same integer operations in every lane, on vectors of
  /// `VectorBytes`: 16 by default, which every x86-64 has (a generic vector wider than the
  /// target's registers is lowered through memory); 32 for a caller compiled for AVX2, whose
  /// state then fits in registers; 64 (all eight lanes in one vector) for AVX-512. Every width
  /// gives the same values.
  template <std::size_t VectorBytes = 16>
  [[gnu::always_inline]] void fill(float* out, std::size_t count) {
    constexpr std::size_t kWidth = VectorBytes / 8, kVectors = kLanes / kWidth;
    using Words = typename LaneVectors<VectorBytes>::Words;
    using Ints = typename LaneVectors<VectorBytes>::Ints;
    using Floats = typename LaneVectors<VectorBytes>::Floats;
    Words s0[kVectors], s1[kVectors], s2[kVectors], s3[kVectors];
    std::memcpy(s0, state_[0], sizeof s0);
    std::memcpy(s1, state_[1], sizeof s1);
    std::memcpy(s2, state_[2], sizeof s2);
    std::memcpy(s3, state_[3], sizeof s3);
    for (std::size_t b = 0; b < count; b += kBlock) {
      for (std::size_t v = 0; v < kVectors; ++v) {
        const Words r = s0[v] + s3[v];
        const Words t = s1[v] << 17;
        s2[v] ^= s0[v];
        s3[v] ^= s1[v];
        s1[v] ^= s2[v];
        s0[v] ^= s3[v];
        s2[v] ^= t;
        s3[v] = (s3[v] << 45) | (s3[v] >> 19);
        // Through int32: below 2^24 the conversion is exact, and signed converts vectorize.
        const Floats high = __builtin_convertvector(__builtin_convertvector(r >> 40, Ints), Floats) * 0x1p-24f;
        const Floats middle =
            __builtin_convertvector(__builtin_convertvector((r >> 16) & 0xFFFFFFu, Ints), Floats) * 0x1p-24f;
        std::memcpy(out + b + v * kWidth, &high, sizeof high);
        std::memcpy(out + b + kLanes + v * kWidth, &middle, sizeof middle);
      }
    }
    std::memcpy(state_[0], s0, sizeof s0);
    std::memcpy(state_[1], s1, sizeof s1);
    std::memcpy(state_[2], s2, sizeof s2);
    std::memcpy(state_[3], s3, sizeof s3);
  }

  /// The 32 state words, for checkpoints.
  std::span<std::uint64_t> state_words() { return {&state_[0][0], 4 * kLanes}; }
  std::span<const std::uint64_t> state_words() const { return {&state_[0][0], 4 * kLanes}; }

 private:
  std::uint64_t state_[4][kLanes];  // word w of lane l at [w][l]
};

}  // namespace laconic::compress
