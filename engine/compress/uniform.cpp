#include "engine/compress/uniform.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<UniformOptions> UniformOptions::fields() {
  using O = UniformOptions;
  return OptionFields<O>()
      .integer("bits", &O::bits, "bits per element: 2^bits equal bins between the gradient's min and max",
               closed(1, 16))
      .flag("error_feedback", &O::error_feedback, "accumulate the quantization error and add it to the next gradient");
}

std::size_t uniform_payload_bytes(std::size_t n, unsigned bits) { return 12 + packed_bytes(n, bits); }

float uniform_bin_width(float min, float max, unsigned bits) {
  // Dividing by a power of two is exact (short of subnormals), so sender and receiver agree.
  return (max - min) / static_cast<float>(1u << bits);
}

UniformCodec::UniformCodec(unsigned bits, Isa isa) : bits_(bits), isa_(isa) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 16, "uniform bits must be in [1, 16], got ", bits);
  LACONIC_ENFORCE(runs_on_this_cpu(isa), "uniform's ", isa_name(isa), " loops need a CPU with ", isa_name(isa));
}

namespace {

// Elements per window of bin indices on the stack (8 KiB); a multiple of 8, so that every window
// but the last packs to whole bytes.
constexpr std::size_t kWindow = 2048;

// Eight lanes of running minimum and maximum (two SSE2-sized GCC vectors, which every x86-64
// target has), then the lanes in order: the same result as one pass, up to the sign of a zero.
void min_max(std::span<const float> x, float& lo, float& hi, bool& nan) {
  using Floats = float __attribute__((vector_size(16)));
  using Ints = std::int32_t __attribute__((vector_size(16)));
  const std::size_t n = x.size(), whole = n - n % 8;
  lo = hi = n > 0 ? x[0] : 0.0f;
  nan = false;
  if (whole > 0) {
    Floats lo_a, lo_b;
    std::memcpy(&lo_a, x.data(), sizeof lo_a);
    std::memcpy(&lo_b, x.data() + 4, sizeof lo_b);
    Floats hi_a = lo_a, hi_b = lo_b;
    Ints nan_a = lo_a != lo_a, nan_b = lo_b != lo_b;
    for (std::size_t i = 8; i < whole; i += 8) {
      Floats a, b;
      std::memcpy(&a, x.data() + i, sizeof a);
      std::memcpy(&b, x.data() + i + 4, sizeof b);
      lo_a = a < lo_a ? a : lo_a;
      lo_b = b < lo_b ? b : lo_b;
      hi_a = a > hi_a ? a : hi_a;
      hi_b = b > hi_b ? b : hi_b;
      nan_a |= a != a;
      nan_b |= b != b;
    }
    for (int l = 0; l < 4; ++l) {
      lo = std::min({lo, lo_a[l], lo_b[l]});
      hi = std::max({hi, hi_a[l], hi_b[l]});
      nan = nan || nan_a[l] != 0 || nan_b[l] != 0;
    }
  }
  for (std::size_t i = whole; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    nan = nan || x[i] != x[i];
  }
}

// The bin of each element: floor((x - lo) * bins_per_unit) in double, clamped to `top`. In
// double x - lo is exact and t is off by ~1e-16 of a bin, where in float it is off by up to
// 2^bits * 2^-24 of a bin (0.4% at 16 bits), moving elements near an edge into the
// neighbouring bin, beyond the promised width/2. x >= lo, so t >= 0; t reaches 2^bits only at
// x = max, which belongs to the last bin. Branch-free (a min, a truncation): it vectorizes.
template <class Index>
[[gnu::always_inline]] inline void bin_indices(const float* x, std::size_t count, double base, double bins_per_unit,
                                               double top, Index* out) {
  for (std::size_t k = 0; k < count; ++k) {
    const double t = std::min((static_cast<double>(x[k]) - base) * bins_per_unit, top);
    out[k] = static_cast<Index>(static_cast<std::int32_t>(t));
  }
}

template <class Index>
[[gnu::always_inline]] inline void add_centres(const Index* index, float* dense, std::size_t count, float lo,
                                               float width) {
  for (std::size_t k = 0; k < count; ++k)
    dense[k] += lo + (static_cast<float>(static_cast<std::int32_t>(index[k])) + 0.5f) * width;
}

// The loops above compiled for each Isa (AVX2 without FMA: a fused multiply-add would round
// differently from the baseline).
template <class Index>
void bin_indices_baseline(const float* x, std::size_t count, double base, double bins_per_unit, double top,
                          Index* out) {
  bin_indices(x, count, base, bins_per_unit, top, out);
}
template <class Index>
void add_centres_baseline(const Index* index, float* dense, std::size_t count, float lo, float width) {
  add_centres(index, dense, count, lo, width);
}
#if defined(__x86_64__) || defined(__i386__)
template <class Index>
[[gnu::target("avx2")]] void bin_indices_avx2(const float* x, std::size_t count, double base, double bins_per_unit,
                                              double top, Index* out) {
  bin_indices(x, count, base, bins_per_unit, top, out);
}
template <class Index>
[[gnu::target("avx2")]] void add_centres_avx2(const Index* index, float* dense, std::size_t count, float lo,
                                              float width) {
  add_centres(index, dense, count, lo, width);
}
#endif

template <class Index>
void bin_indices_on(Isa isa, const float* x, std::size_t count, double base, double bins_per_unit, double top,
                    Index* out) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa >= Isa::Avx2) return bin_indices_avx2(x, count, base, bins_per_unit, top, out);
#endif
  bin_indices_baseline(x, count, base, bins_per_unit, top, out);
}

template <class Index>
void add_centres_on(Isa isa, const Index* index, float* dense, std::size_t count, float lo, float width) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa >= Isa::Avx2) return add_centres_avx2(index, dense, count, lo, width);
#endif
  add_centres_baseline(index, dense, count, lo, width);
}

}  // namespace

void UniformCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "uniform handles at most ", "2^32-1 elements, got ",
                  n);
  float lo, hi;
  bool nan;
  min_max(gradient, lo, hi, nan);
  if (nan) lo = hi = std::numeric_limits<float>::quiet_NaN();

  // No clear(): resizing to the size of the previous payload then neither allocates nor
  // zero-fills, and every byte is written below.
  payload.resize(uniform_payload_bytes(n, bits_));
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &lo, 4);
  std::memcpy(payload.data() + 8, &hi, 4);
  std::uint8_t* out = payload.data() + 12;

  const double range = static_cast<double>(hi) - static_cast<double>(lo);
  if (!(range > 0.0 && std::isfinite(range))) {  // bin 0 everywhere
    std::fill(out, payload.data() + payload.size(), std::uint8_t{0});
    return;
  }
  const double bins_per_unit = static_cast<double>(1u << bits_) / range;
  const auto top = static_cast<double>((1u << bits_) - 1);
  const float* x = gradient.data();
  if (bits_ == 8) {  // one byte per element, no packing
    bin_indices_on(isa_, x, n, lo, bins_per_unit, top, out);
    return;
  }
  alignas(64) std::uint32_t index[kWindow];
  for (std::size_t w0 = 0; w0 < n; w0 += kWindow) {
    const std::size_t wn = std::min(kWindow, n - w0);
    bin_indices_on(isa_, x + w0, wn, lo, bins_per_unit, top, index);
    pack_bits_to(index, wn, bits_, out, isa_);
    out += wn * bits_ / 8;  // whole bytes but after the last window
  }
}

void UniformCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 12, dense.size(), "uniform");
  const float lo = header_float(payload, 4), hi = header_float(payload, 8);
  LACONIC_ENFORCE(payload.size() == uniform_payload_bytes(n, bits_), "expected ", uniform_payload_bytes(n, bits_),
                  " uniform payload bytes for ", n, " elements of ", bits_, " bits, got ", payload.size());
  const float width = uniform_bin_width(lo, hi, bits_);
  const std::uint8_t* in = payload.data() + 12;
  if (bits_ == 8) {
    add_centres_on(isa_, in, dense.data(), n, lo, width);
    return;
  }
  alignas(64) std::uint32_t index[kWindow];
  for (std::size_t w0 = 0; w0 < n; w0 += kWindow) {
    const std::size_t wn = std::min(kWindow, n - w0);
    unpack_bits_from(in, wn, bits_, index, isa_);
    in += wn * bits_ / 8;
    add_centres_on(isa_, index, dense.data() + w0, wn, lo, width);
  }
}

}  // namespace laconic::compress
