#include "engine/compress/adaptive.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

static_assert(std::endian::native == std::endian::little, "adaptive.cpp assumes little-endian");

namespace {

constexpr std::uint8_t kCodingFixed = 0;
constexpr std::uint8_t kCodingHuffman = 1;

std::uint64_t packed_bits(std::size_t n, unsigned bits) { return static_cast<std::uint64_t>(n) * bits; }

// Min-max bin of x (see the class comment); `bins_per_unit` = 2^bits / (max - min) > 0 finite.
inline std::uint32_t bin_of(float x, float lo, float bins_per_unit, std::uint32_t top) {
  const float t = (x - lo) * bins_per_unit;  // >= 0; 2^bits only at x = max
  return t >= static_cast<float>(top) ? top : static_cast<std::uint32_t>(t);
}

// bin_of() for the bulk pass: the same result (min(t, top) truncated equals the clamp), written
// so that it vectorizes (a float min and a signed conversion; indices are below 2^16).
inline std::uint16_t bin_fast(float x, float lo, float bins_per_unit, float top) {
  const float t = (x - lo) * bins_per_unit;
  return static_cast<std::uint16_t>(static_cast<std::int32_t>(t < top ? t : top));
}

// counts[i] = occurrences of bin i, added a chunk at a time. Four interleaved partial counts, so
// that runs of one bin (a skewed or constant layer) do not serialize on one counter; they live in
// `counts` itself, four blocks wide, only when that is cheap relative to n (the caller's vector is
// grown once and then reused).
class BinCounter {
 public:
  BinCounter(std::vector<std::uint64_t>& counts, std::size_t bins, std::size_t n)
      : counts_(counts), bins_(bins), lanes_(n >= 16 * bins ? 4 : 1) {
    counts_.assign(lanes_ * bins_, 0);
  }
  void add(std::span<const std::uint16_t> indices) {
    std::uint64_t* c = counts_.data();
    std::size_t i = 0;
    if (lanes_ == 4)
      for (; i + 4 <= indices.size(); i += 4) {
        ++c[indices[i]];
        ++c[bins_ + indices[i + 1]];
        ++c[2 * bins_ + indices[i + 2]];
        ++c[3 * bins_ + indices[i + 3]];
      }
    for (; i < indices.size(); ++i) ++c[indices[i]];
  }
  /// Folds the partial counts into the first `bins`.
  void finish() {
    std::uint64_t* c = counts_.data();
    for (std::size_t lane = 1; lane < lanes_; ++lane)
      for (std::size_t b = 0; b < bins_; ++b) c[b] += c[lane * bins_ + b];
    counts_.resize(bins_);
  }

 private:
  std::vector<std::uint64_t>& counts_;
  std::size_t bins_;
  std::size_t lanes_;
};

// indices[i] = the bin of g[i] at `bits` bits over [lo, lo + range] (range > 0, finite), and with
// `counts` the bins counted. A chunk at a time, counted while it is in the cache; without the
// histogram in it the quantizing loop vectorizes.
void quantize(std::span<const float> g, float lo, float range, unsigned bits, std::vector<std::uint16_t>& indices,
              std::vector<std::uint64_t>* counts) {
  constexpr std::size_t kChunk = 4096;
  const std::size_t n = g.size();
  const float top = static_cast<float>((1u << bits) - 1);
  const float bins_per_unit = static_cast<float>(1u << bits) / range;
  const float* in = g.data();
  std::uint16_t* out = indices.data();
  std::optional<BinCounter> counter;
  if (counts != nullptr) counter.emplace(*counts, std::size_t{1} << bits, n);
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t end = std::min(n, begin + kChunk);
    for (std::size_t i = begin; i < end; ++i) out[i] = bin_fast(in[i], lo, bins_per_unit, top);
    if (counter) counter->add({out + begin, end - begin});
  }
  if (counter) counter->finish();
}

// Appends the indices packed LSB-first in `bits` bits each (bitpack.hpp's order).
void append_packed(std::span<const std::uint16_t> indices, unsigned bits, Payload& out) {
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>((packed_bits(indices.size(), bits) + 7) / 8));
  BitSink sink(out.data() + at);
  for (std::uint16_t index : indices) sink.put(index, bits);
  sink.finish();
}

struct Extent {
  float lo = 0.0f, hi = 0.0f;
  bool nan = false;
};

// Min, max and whether a NaN occurs, in one pass, eight lanes at a time: two 16-byte vectors of
// GCC's vector extensions (every x86-64 has them; a wider generic vector would go through memory).
// A single running min is a serial chain of compares, and the compiler does not vectorize the
// compares of eight scalar lanes.
Extent extent(std::span<const float> g) {
  using Lanes = float __attribute__((vector_size(16)));
  using Mask = std::int32_t __attribute__((vector_size(16)));
  constexpr std::size_t kWidth = 4, kLanes = 2 * kWidth;
  Extent e;
  const std::size_t n = g.size();
  if (n == 0) return e;
  Lanes lo_lanes[2], hi_lanes[2];
  Mask nan_lanes[2] = {};
  lo_lanes[0] = lo_lanes[1] = hi_lanes[0] = hi_lanes[1] = Lanes{} + g[0];
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t v = 0; v < 2; ++v) {
      Lanes x;
      std::memcpy(&x, g.data() + i + v * kWidth, sizeof x);
      lo_lanes[v] = x < lo_lanes[v] ? x : lo_lanes[v];
      hi_lanes[v] = x > hi_lanes[v] ? x : hi_lanes[v];
      nan_lanes[v] |= x != x;
    }
  float lo[kLanes], hi[kLanes];
  std::int32_t nan[kLanes];
  std::memcpy(lo, lo_lanes, sizeof lo);
  std::memcpy(hi, hi_lanes, sizeof hi);
  std::memcpy(nan, nan_lanes, sizeof nan);
  for (; i < n; ++i) {
    const float x = g[i];
    lo[0] = x < lo[0] ? x : lo[0];
    hi[0] = x > hi[0] ? x : hi[0];
    nan[0] |= x != x;
  }
  e.lo = lo[0];
  e.hi = hi[0];
  for (std::size_t k = 0; k < kLanes; ++k) {
    e.lo = lo[k] < e.lo ? lo[k] : e.lo;
    e.hi = hi[k] > e.hi ? hi[k] : e.hi;
    e.nan = e.nan || nan[k] != 0;
  }
  if (e.nan) e.lo = e.hi = std::numeric_limits<float>::quiet_NaN();
  return e;
}

// Reads n indices of `bits` bits; the caller checked that `bytes` holds ceil(n bits / 8) bytes.
void unpack(std::span<const std::uint8_t> bytes, unsigned bits, std::span<std::uint16_t> out) {
  std::uint64_t buffer = 0;
  unsigned have = 0;
  std::size_t next = 0;
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  for (auto& index : out) {
    while (have < bits) {
      buffer |= static_cast<std::uint64_t>(bytes[next++]) << have;
      have += 8;
    }
    index = static_cast<std::uint16_t>(buffer & mask);
    buffer >>= bits;
    have -= bits;
  }
}

}  // namespace

OptionFields<AdaptiveOptions> AdaptiveOptions::fields() {
  using O = AdaptiveOptions;
  return OptionFields<O>()
      .number("sample_fraction", &O::sample_fraction, "F: fraction of elements sampled to estimate the entropy",
              open_closed(0, 1))
      .integer("probe_bits", &O::probe_bits, "M: bits of the quantizer the entropy is measured at", closed(1, 16))
      .integer("floor_bits", &O::floor_bits,
               "c: fewest bits per element; bits = floor_bits + ceil(entropy), at most 16", closed(1, 16))
      .flag("huffman", &O::huffman, "Huffman-code the bin indices (codebook in the payload) instead of packing them")
      .flag("error_feedback", &O::error_feedback, "accumulate the quantization error and add it to the next gradient");
}

std::size_t adaptive_payload_bytes(const AdaptivePayloadParts& parts) {
  return parts.header_bytes + parts.codebook_bytes + static_cast<std::size_t>((parts.code_bits + 7) / 8);
}

std::size_t adaptive_sample_size(double fraction, std::size_t n) {
  if (n == 0) return 0;
  const auto s = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n)));
  return std::clamp<std::size_t>(s, 1, n);
}

unsigned adaptive_bits(double entropy_bits, unsigned floor_bits) {
  const double extra = std::ceil(std::max(0.0, entropy_bits - 1e-9));
  return static_cast<unsigned>(std::min<double>(kAdaptiveMaxBits, static_cast<double>(floor_bits) + extra));
}

AdaptiveCodec::AdaptiveCodec(const AdaptiveOptions& options)
    : PrivateStreamCodec(streams::kAdaptiveSample), options_(options) {
  LACONIC_ENFORCE(options.sample_fraction > 0.0 && options.sample_fraction <= 1.0,
                  "adaptive sample_fraction must be in (0, 1], got ", options.sample_fraction);
  LACONIC_ENFORCE(options.probe_bits >= 1 && options.probe_bits <= 16, "adaptive probe_bits must be in [1, 16], got ",
                  options.probe_bits);
  LACONIC_ENFORCE(options.floor_bits >= 1 && options.floor_bits <= 16, "adaptive floor_bits must be in [1, 16], got ",
                  options.floor_bits);
}

void AdaptiveCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "adaptive handles at most ", "2^32-1 elements, got ",
                  n);
  const auto [lo, hi, nan] = extent(gradient);
  const float range = hi - lo;
  const bool spread = range > 0.0f && std::isfinite(range);

  // Entropy of a random sample quantized at probe_bits (Algorithm 1, Estimate Entropy).
  const auto probe_bits = static_cast<unsigned>(options_.probe_bits);
  const std::size_t samples = adaptive_sample_size(options_.sample_fraction, n);
  probe_counts_.assign(std::size_t{1} << probe_bits, 0);
  {
    const std::uint32_t top = (1u << probe_bits) - 1;
    const float bins_per_unit = spread ? static_cast<float>(1u << probe_bits) / range : 0.0f;
    for (std::size_t j = 0; j < samples; ++j) {
      // n < 2^32 and j < n, so j * n fits in 64 bits.
      const std::size_t start = j * n / samples, end = (j + 1) * n / samples;
      const float x = gradient[start + rng_.below(end - start)];
      ++probe_counts_[spread ? bin_of(x, lo, bins_per_unit, top) : 0];
    }
  }
  double entropy = 0.0;
  for (std::uint64_t c : probe_counts_) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / static_cast<double>(samples);
    entropy -= p * std::log2(p);
  }
  const unsigned bits = adaptive_bits(entropy, static_cast<unsigned>(options_.floor_bits));
  last_entropy_ = entropy;
  last_bits_ = bits;

  // Quantize everything at `bits` and count the bins (Algorithm 1, lines 6-7).
  indices_.resize(n);
  counts_.assign(std::size_t{1} << bits, 0);
  if (spread) {
    quantize(gradient, lo, range, bits, indices_, options_.huffman ? &counts_ : nullptr);
  } else {
    std::fill(indices_.begin(), indices_.end(), std::uint16_t{0});
    counts_[0] = n;
  }

  // Huffman unless packing is strictly smaller (Algorithm 1, lines 8-10).
  last_parts_ = AdaptivePayloadParts{kAdaptiveHeaderBytes, 0, packed_bits(n, bits)};
  std::uint8_t coding = kCodingFixed;
  if (options_.huffman) {
    encoder_.build(counts_);
    const AdaptivePayloadParts huffman{kAdaptiveHeaderBytes, encoder_.codebook_bytes(), encoder_.coded_bits(counts_)};
    if (adaptive_payload_bytes(huffman) < adaptive_payload_bytes(last_parts_)) {
      last_parts_ = huffman;
      coding = kCodingHuffman;
    }
  }

  payload.clear();  // keeps the capacity: no allocation in steady state
  payload.reserve(adaptive_payload_bytes(last_parts_));
  payload.resize(kAdaptiveHeaderBytes);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &lo, 4);
  std::memcpy(payload.data() + 8, &hi, 4);
  payload[12] = static_cast<std::uint8_t>(bits);
  payload[13] = coding;
  if (coding == kCodingHuffman) {
    encoder_.write_codebook(payload);
    encoder_.write_codes(indices_, last_parts_.code_bits, payload);  // the bits the counts gave
  } else {
    append_packed(indices_, bits, payload);
  }
  LACONIC_ENFORCE(payload.size() == adaptive_payload_bytes(last_parts_), "wrote ", payload.size(),
                  " adaptive payload bytes, expected ", adaptive_payload_bytes(last_parts_));
}

void AdaptiveCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, kAdaptiveHeaderBytes, dense.size(), "adaptive");
  const float lo = header_float(payload, 4), hi = header_float(payload, 8);
  const unsigned bits = payload[12];
  const unsigned coding = payload[13];
  LACONIC_ENFORCE(bits >= 1 && bits <= kAdaptiveMaxBits, "expected adaptive bits in [1, ", kAdaptiveMaxBits, "], got ",
                  bits);
  const auto body = std::span<const std::uint8_t>(payload).subspan(kAdaptiveHeaderBytes);
  decoded_.resize(n);
  if (coding == kCodingFixed) {
    const auto expected = static_cast<std::size_t>((packed_bits(n, bits) + 7) / 8);
    LACONIC_ENFORCE(body.size() == expected, "expected ", kAdaptiveHeaderBytes + expected,
                    " adaptive payload bytes for ", n, " elements of ", bits, " bits, got ", payload.size());
    unpack(body, bits, decoded_);
  } else {
    LACONIC_ENFORCE(coding == kCodingHuffman, "unknown adaptive coding ", coding, " (expected 0 or 1)");
    const std::size_t codebook = decoder_.read_codebook(body);
    LACONIC_ENFORCE(decoder_.alphabet() == (std::size_t{1} << bits), "expected a codebook of ", std::size_t{1} << bits,
                    " symbols for ", bits, " bits, got ", decoder_.alphabet());
    const std::size_t codes = decoder_.read_codes(body.subspan(codebook), decoded_);
    LACONIC_ENFORCE(codebook + codes == body.size(), "expected ", kAdaptiveHeaderBytes + codebook + codes,
                    " adaptive payload bytes, got ", payload.size());
  }
  // Bin centres, as the encoder's rule (Algorithm 2, line 4).
  const float width = (hi - lo) / static_cast<float>(1u << bits);
  for (std::size_t i = 0; i < n; ++i) dense[i] += lo + (static_cast<float>(decoded_[i]) + 0.5f) * width;
}

}  // namespace laconic::compress
