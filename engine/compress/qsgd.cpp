#include "engine/compress/qsgd.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/element_math.hpp"
#include "engine/compress/elias.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<QsgdOptions> QsgdOptions::fields() {
  using O = QsgdOptions;
  return OptionFields<O>()
      .integer("levels", &O::levels, "quantization levels s of |x|/norm per bucket", closed(1, 65535))
      .integer("bucket_size", &O::bucket_size, "elements sharing one float32 norm", at_least(1))
      .choice("coding", &O::coding,
              "\"fixed\": sign bit + ceil(log2(levels+1)) bits per element; \"elias\": Elias-gamma coded levels, "
              "sign only for nonzero levels",
              {{QsgdCoding::Fixed, "fixed"}, {QsgdCoding::Elias, "elias"}})
      .flag("error_feedback", &O::error_feedback, "accumulate the quantization error and add it to the next gradient");
}

unsigned qsgd_fixed_bits(unsigned levels) {
  // ceil(log2(levels + 1)) = bit width of `levels`.
  return 1 + static_cast<unsigned>(std::bit_width(levels));
}

std::size_t qsgd_buckets(std::size_t n, std::size_t bucket_size) { return (n + bucket_size - 1) / bucket_size; }

std::size_t qsgd_payload_bytes(std::size_t n, std::size_t bucket_size, unsigned levels) {
  return 4 + 4 * qsgd_buckets(n, bucket_size) + packed_bytes(n, qsgd_fixed_bits(levels));
}

std::size_t qsgd_elias_payload_bytes(std::span<const std::uint32_t> element_levels, std::size_t bucket_size) {
  std::uint64_t bits = 0;
  for (std::uint32_t l : element_levels) bits += elias_bits(l) + (l > 0 ? 1 : 0);
  return 4 + 4 * qsgd_buckets(element_levels.size(), bucket_size) + static_cast<std::size_t>((bits + 7) / 8);
}

QsgdCodec::QsgdCodec(unsigned levels, std::size_t bucket_size, QsgdCoding coding, Isa isa)
    : PrivateStreamCodec(streams::kQsgdRounding),
      levels_(levels),
      bucket_size_(bucket_size),
      coding_(coding),
      isa_(isa) {
  LACONIC_ENFORCE(runs_on_this_cpu(isa), "qsgd's ", isa_name(isa), " loops need a CPU with ", isa_name(isa));
  LACONIC_ENFORCE(levels >= 1 && levels <= 65535, "qsgd levels must be in [1, 65535], got ", levels);
  LACONIC_ENFORCE(bucket_size >= 1, "qsgd bucket size must be >= 1, got ", bucket_size);
}

namespace {

[[gnu::always_inline]] inline float bucket_norm(const float* x, std::size_t n) {
  // Squares of floats are exact in double and the double sum cannot overflow, so the norm is
  // never below any |x| of its bucket. Eight partial sums in a fixed order: they vectorize (two
  // or four doubles per instruction) and give the same bits on every machine.
  double partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8)
    for (std::size_t j = 0; j < 8; ++j) partial[j] += static_cast<double>(x[i + j]) * static_cast<double>(x[i + j]);
  for (std::size_t i = whole; i < n; ++i) partial[i - whole] += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double squares =
      ((partial[0] + partial[4]) + (partial[1] + partial[5])) + ((partial[2] + partial[6]) + (partial[3] + partial[7]));
  return static_cast<float>(std::sqrt(squares));
}

// Elements per window: the uniforms and codes of one window live on the stack (16 KiB), and a
// multiple of 16 keeps the packed stream of every window but the last at a byte boundary.
constexpr std::size_t kWindow = 2048;

// codes[k] = (level << 1) | sign for one bucket's elements, with `uniform` one draw per element
// (element::qsgd_code). No branches and no libm calls, so the loop vectorizes.
[[gnu::always_inline]] inline void quantize(const float* x, const float* uniform, std::uint32_t* codes,
                                            std::size_t count, float scale, float s) {
  for (std::size_t k = 0; k < count; ++k) codes[k] = element::qsgd_code(x[k], uniform[k], scale, s);
}

// dense[k] += +-level * unit for one bucket's codes (element::qsgd_value).
[[gnu::always_inline]] inline void dequantize_add(const std::uint32_t* codes, float* dense, std::size_t count,
                                                  float unit) {
  for (std::size_t k = 0; k < count; ++k) dense[k] += element::qsgd_value(codes[k], unit);
}

// The largest of a window's codes: one compare then tells whether every level is in range.
[[gnu::always_inline]] inline std::uint32_t largest_code(const std::uint32_t* codes, std::size_t count) {
  std::uint32_t largest = 0;
  for (std::size_t k = 0; k < count; ++k) largest = std::max(largest, codes[k]);
  return largest;
}

// The loops above compiled for each Isa, with no fused multiply-add (the library is built with
// -ffp-contract=off): one would round the partial sums and the products differently from the
// baseline.
struct Kernels {
  float (*norm)(const float*, std::size_t);
  void (*fill)(UniformStream&, float*, std::size_t);
  void (*quantize)(const float*, const float*, std::uint32_t*, std::size_t, float, float);
  void (*dequantize_add)(const std::uint32_t*, float*, std::size_t, float);
  std::uint32_t (*largest)(const std::uint32_t*, std::size_t);
};

// The kernels compiled with ATTRIBUTES (an instruction set) as functions NAME_norm ... and the
// table TABLE of them; the uniform stream with vectors of FILL_BYTES.
#define LACONIC_QSGD_KERNELS(TABLE, NAME, ATTRIBUTES, FILL_BYTES)                                                      \
  ATTRIBUTES float NAME##_norm(const float* x, std::size_t n) { return bucket_norm(x, n); }                            \
  ATTRIBUTES void NAME##_fill(UniformStream& rng, float* out, std::size_t count) { rng.fill<FILL_BYTES>(out, count); } \
  ATTRIBUTES void NAME##_quantize(const float* x, const float* u, std::uint32_t* c, std::size_t n, float scale,        \
                                  float s) {                                                                           \
    quantize(x, u, c, n, scale, s);                                                                                    \
  }                                                                                                                    \
  ATTRIBUTES void NAME##_dequantize_add(const std::uint32_t* c, float* d, std::size_t n, float unit) {                 \
    dequantize_add(c, d, n, unit);                                                                                     \
  }                                                                                                                    \
  ATTRIBUTES std::uint32_t NAME##_largest(const std::uint32_t* c, std::size_t n) { return largest_code(c, n); }        \
  constexpr Kernels TABLE = {NAME##_norm, NAME##_fill, NAME##_quantize, NAME##_dequantize_add, NAME##_largest};

LACONIC_QSGD_KERNELS(kBaseline, baseline, [[]], 16)
#if defined(__x86_64__) || defined(__i386__)
LACONIC_QSGD_KERNELS(kAvx2, avx2, [[gnu::target("avx2")]], 32)
LACONIC_QSGD_KERNELS(kAvx512, avx512, [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512")]], 64)
#endif
#undef LACONIC_QSGD_KERNELS

const Kernels& kernels(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == Isa::Avx512) return kAvx512;
  if (isa == Isa::Avx2) return kAvx2;
#endif
  (void)isa;
  return kBaseline;
}

}  // namespace

float qsgd_bucket_norm(std::span<const float> bucket) { return bucket_norm(bucket.data(), bucket.size()); }

void QsgdCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "qsgd handles at most 2^32-1 ", "elements, got ", n);
  const std::size_t buckets = qsgd_buckets(n, bucket_size_);
  const std::size_t head = 4 + 4 * buckets;
  const unsigned fixed_bits = qsgd_fixed_bits(levels_);
  const bool fixed = coding_ == QsgdCoding::Fixed;
  // Fixed coding writes every byte, so no clear(): resizing to the previous payload's size then
  // neither allocates nor zero-fills. Elias coding appends after the norms.
  if (!fixed) payload.clear();
  payload.resize(fixed ? qsgd_payload_bytes(n, bucket_size_, levels_) : head);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);

  const auto s = static_cast<float>(levels_);
  const Kernels& k = kernels(isa_);
  // A local copy: byte stores into the payload may alias any member, which would force the
  // generator's state through memory.
  UniformStream rng = rng_;
  alignas(64) float uniforms[kWindow];
  alignas(64) std::uint32_t codes[kWindow];
  std::size_t bucket = 0, bucket_end = 0;
  float scale = 0.0f;
  bool degenerate = true;
  std::size_t packed = head;  // fixed coding: next payload byte
  BitWriter writer(payload);  // elias coding only
  for (std::size_t w0 = 0; w0 < n; w0 += kWindow) {
    const std::size_t wn = std::min(kWindow, n - w0);
    // One uniform per element, in element order, whatever the bucket (a degenerate bucket
    // wastes its draws); a call draws n rounded up to a whole block.
    const std::size_t blocks = (wn + UniformStream::kBlock - 1) / UniformStream::kBlock;
    k.fill(rng, uniforms, blocks * UniformStream::kBlock);
    for (std::size_t i = w0; i < w0 + wn;) {
      if (i == bucket_end) {
        bucket_end = std::min(n, i + bucket_size_);
        const float norm = k.norm(gradient.data() + i, bucket_end - i);
        std::memcpy(payload.data() + 4 + 4 * bucket, &norm, 4);
        ++bucket;
        scale = element::qsgd_scale(norm, s);  // 0: a degenerate bucket, level 0 throughout
        degenerate = scale == 0.0f;
      }
      const std::size_t end = std::min(bucket_end, w0 + wn);
      if (degenerate)
        std::fill(codes + (i - w0), codes + (end - w0), 0u);
      else
        k.quantize(gradient.data() + i, uniforms + (i - w0), codes + (i - w0), end - i, scale, s);
      i = end;
    }
    if (fixed) {
      pack_bits_to(codes, wn, fixed_bits, payload.data() + packed, isa_);
      packed += wn * fixed_bits / 8;  // whole bytes but after the last window
    } else {
      for (std::size_t j = 0; j < wn; ++j) {
        const std::uint32_t level = codes[j] >> 1;
        write_elias(writer, level);
        writer.write(codes[j] & 1, level != 0 ? 1 : 0);  // no branch on a coin flip
      }
    }
  }
  if (!fixed) writer.finish();
  rng_ = rng;
}

void QsgdCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 4, dense.size(), "qsgd");
  const std::size_t buckets = qsgd_buckets(n, bucket_size_);
  const std::size_t head = 4 + 4 * buckets;
  LACONIC_ENFORCE(payload.size() >= head, "expected at least ", head, " qsgd payload bytes for ", buckets,
                  " buckets, got ", payload.size());
  const unsigned fixed_bits = qsgd_fixed_bits(levels_);
  const bool fixed = coding_ == QsgdCoding::Fixed;
  if (fixed) {
    const std::size_t expected = qsgd_payload_bytes(n, bucket_size_, levels_);
    LACONIC_ENFORCE(payload.size() == expected, "expected ", expected, " qsgd payload bytes for ", n, " elements, got ",
                    payload.size());
  }
  const auto s = static_cast<float>(levels_);
  const Kernels& kern = kernels(isa_);
  const auto norm_of = [&](std::size_t b) {
    float norm;
    std::memcpy(&norm, payload.data() + 4 + 4 * b, 4);
    return norm;
  };
  BitReader reader(std::span<const std::uint8_t>(payload).subspan(head));  // elias only
  std::size_t packed = head;
  alignas(64) std::uint32_t codes[kWindow];
  for (std::size_t w0 = 0; w0 < n; w0 += kWindow) {
    const std::size_t wn = std::min(kWindow, n - w0);
    std::uint32_t largest = 0;
    if (fixed) {
      unpack_bits_from(payload.data() + packed, wn, fixed_bits, codes, isa_);
      packed += wn * fixed_bits / 8;
      largest = kern.largest(codes, wn);
    } else {
      for (std::size_t k = 0; k < wn; ++k) {
        const std::uint64_t level = read_elias(reader);
        LACONIC_ENFORCE(level <= levels_, "payload level ", level, " of element ", w0 + k, " exceeds levels=", levels_);
        codes[k] = static_cast<std::uint32_t>(level << 1) | reader.read(level != 0 ? 1 : 0);
      }
    }
    if ((largest >> 1) > levels_) {  // one compare per window; find the element to name it
      const std::size_t k = static_cast<std::size_t>(
          std::find_if(codes, codes + wn, [&](std::uint32_t c) { return (c >> 1) > levels_; }) - codes);
      LACONIC_ENFORCE(false, "payload level ", codes[k] >> 1, " of element ", w0 + k, " exceeds levels=", levels_);
    }
    // Buckets overlapping this window, each with its own unit.
    for (std::size_t i = w0; i < w0 + wn;) {
      const std::size_t b = i / bucket_size_;
      const std::size_t end = std::min({(b + 1) * bucket_size_, w0 + wn, n});
      kern.dequantize_add(codes + (i - w0), dense.data() + i, end - i, norm_of(b) / s);
      i = end;
    }
  }
  if (!fixed)
    LACONIC_ENFORCE(reader.bytes_read() == payload.size() - head, "expected ", head + reader.bytes_read(),
                    " qsgd payload bytes for ", n, " elements, got ", payload.size());
}

QsgdCompressor::QsgdCompressor(QsgdOptions options)
    : WithErrorFeedback(options.error_feedback, static_cast<unsigned>(options.levels),
                        static_cast<std::size_t>(options.bucket_size), options.coding) {}

}  // namespace laconic::compress
