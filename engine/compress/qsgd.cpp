#include "engine/compress/qsgd.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/elias.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::vector<FieldSpec> QsgdOptions::fields() {
  return {
      {"levels", FieldType::Int, std::int64_t{16},
       "quantization levels s of |x|/norm per bucket, in [1, 65535]"},
      {"bucket_size", FieldType::Int, std::int64_t{512},
       "elements sharing one float32 norm, >= 1"},
      {"coding", FieldType::String, std::string("fixed"),
       "\"fixed\": sign bit + ceil(log2(levels+1)) bits per element; \"elias\": Elias-gamma "
       "coded levels, sign only for nonzero levels"},
      {"error_feedback", FieldType::Bool, false,
       "accumulate the quantization error and add it to the next gradient"},
  };
}

QsgdOptions QsgdOptions::from(const ComponentSpec& spec) {
  QsgdOptions o;
  o.levels = spec.integer("levels");
  o.bucket_size = spec.integer("bucket_size");
  o.coding = spec.text("coding");
  o.error_feedback = spec.flag("error_feedback");
  if (o.levels < 1 || o.levels > 65535)
    throw ConfigError(str_cat("qsgd.levels must be in [1, 65535], got ", o.levels));
  if (o.bucket_size < 1)
    throw ConfigError(str_cat("qsgd.bucket_size must be >= 1, got ", o.bucket_size));
  if (o.coding != "fixed" && o.coding != "elias")
    throw ConfigError(
        str_cat("qsgd.coding must be one of \"fixed\", \"elias\", got \"", o.coding, "\""));
  return o;
}

unsigned qsgd_fixed_bits(unsigned levels) {
  // ceil(log2(levels + 1)) = bit width of `levels`.
  return 1 + static_cast<unsigned>(std::bit_width(levels));
}

std::size_t qsgd_buckets(std::size_t n, std::size_t bucket_size) {
  return (n + bucket_size - 1) / bucket_size;
}

std::size_t qsgd_payload_bytes(std::size_t n, std::size_t bucket_size, unsigned levels) {
  return 4 + 4 * qsgd_buckets(n, bucket_size) + packed_bytes(n, qsgd_fixed_bits(levels));
}

std::size_t qsgd_elias_payload_bytes(std::span<const std::uint32_t> element_levels,
                                     std::size_t bucket_size) {
  std::uint64_t bits = 0;
  for (std::uint32_t l : element_levels) bits += elias_bits(l) + (l > 0 ? 1 : 0);
  return 4 + 4 * qsgd_buckets(element_levels.size(), bucket_size) +
         static_cast<std::size_t>((bits + 7) / 8);
}

QsgdCodec::QsgdCodec(unsigned levels, std::size_t bucket_size, QsgdCoding coding)
    : levels_(levels), bucket_size_(bucket_size), coding_(coding), rng_(derive_seed(0, 1000)) {
  LACONIC_ENFORCE(levels >= 1 && levels <= 65535, "qsgd levels must be in [1, 65535], got ",
                  levels);
  LACONIC_ENFORCE(bucket_size >= 1, "qsgd bucket size must be >= 1, got ", bucket_size);
}

void QsgdCodec::set_seed(std::uint64_t run_seed, int rank) {
  rng_.reseed(derive_seed(run_seed, 1000 + static_cast<std::uint64_t>(rank)));
}

void QsgdCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "qsgd handles at most 2^32-1 ",
                  "elements, got ", n);
  const std::size_t buckets = qsgd_buckets(n, bucket_size_);
  const std::size_t head = 4 + 4 * buckets;
  const unsigned fixed_bits = qsgd_fixed_bits(levels_);
  payload.clear();  // keeps the capacity: no allocation in steady state
  if (coding_ == QsgdCoding::Fixed) payload.reserve(qsgd_payload_bytes(n, bucket_size_, levels_));
  payload.resize(head);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);

  const auto s = static_cast<float>(levels_);
  // A local copy: byte stores into the payload may alias any member, which would force the
  // generator's state through memory on every draw.
  Rng rng = rng_;
  BitWriter writer(payload);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * bucket_size_;
    const std::size_t end = std::min(n, begin + bucket_size_);
    // Squares of floats are exact in double, and the double sum cannot overflow, so the norm is
    // never below any |x| of its bucket: |x| * s / norm stays <= s up to the rounding of `scale`.
    double squares = 0.0;
    for (std::size_t i = begin; i < end; ++i)
      squares += static_cast<double>(gradient[i]) * static_cast<double>(gradient[i]);
    const auto norm = static_cast<float>(std::sqrt(squares));
    std::memcpy(payload.data() + 4 + 4 * b, &norm, 4);  // data() anew: the writer may grow it
    // A zero, infinite or NaN norm sends level 0 (the norm carries inf/NaN on to the receiver);
    // so does a norm so small (< ~1e-34 * levels) that s / norm overflows, at a bias below that.
    bool degenerate = !(norm > 0.0f) || !std::isfinite(norm);
    const float scale = degenerate ? 0.0f : s / norm;
    degenerate = degenerate || !std::isfinite(scale);
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t level = 0, negative = 0;
      if (!degenerate) {
        // Clamping r (not the level) keeps r = s exact for the largest element: p = 0 there.
        const float r = std::min(std::fabs(gradient[i]) * scale, s);
        level = static_cast<std::uint32_t>(r);  // floor, as r >= 0; std::floor is a libm call
        if (rng.uniform() < r - static_cast<float>(level)) ++level;
        // Branch-free: the sign of a gradient is a coin flip the predictor cannot learn.
        negative = (std::bit_cast<std::uint32_t>(gradient[i]) >> 31) & (level != 0 ? 1u : 0u);
      }
      if (coding_ == QsgdCoding::Fixed) {
        writer.write((level << 1) | negative, fixed_bits);
      } else {
        write_elias(writer, level);
        writer.write(negative, level != 0 ? 1 : 0);  // no branch on a coin flip
      }
    }
  }
  writer.finish();
  rng_ = rng;
}

void QsgdCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() >= 4, "expected a qsgd payload of at least 4 bytes, got ",
                  payload.size());
  std::uint32_t count;
  std::memcpy(&count, payload.data(), 4);
  const std::size_t n = count;
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(),
                  " elements, got one for ", n);
  const std::size_t buckets = qsgd_buckets(n, bucket_size_);
  const std::size_t head = 4 + 4 * buckets;
  LACONIC_ENFORCE(payload.size() >= head, "expected at least ", head, " qsgd payload bytes for ",
                  buckets, " buckets, got ", payload.size());
  const unsigned fixed_bits = qsgd_fixed_bits(levels_);
  if (coding_ == QsgdCoding::Fixed) {
    const std::size_t expected = qsgd_payload_bytes(n, bucket_size_, levels_);
    LACONIC_ENFORCE(payload.size() == expected, "expected ", expected, " qsgd payload bytes for ",
                    n, " elements, got ", payload.size());
  }
  const auto s = static_cast<float>(levels_);
  BitReader reader(std::span<const std::uint8_t>(payload).subspan(head));
  for (std::size_t b = 0; b < buckets; ++b) {
    float norm;
    std::memcpy(&norm, payload.data() + 4 + 4 * b, 4);
    const float unit = norm / s;
    const std::size_t begin = b * bucket_size_;
    const std::size_t end = std::min(n, begin + bucket_size_);
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t level;
      std::uint32_t negative = 0;
      if (coding_ == QsgdCoding::Fixed) {
        const std::uint32_t v = reader.read(fixed_bits);
        level = v >> 1;
        negative = v & 1;
      } else {
        level = read_elias(reader);
        negative = reader.read(level != 0 ? 1 : 0);
      }
      LACONIC_ENFORCE(level <= levels_, "payload level ", level, " of element ", i,
                      " exceeds levels=", levels_);
      const float value = static_cast<float>(level) * unit;
      dense[i] += negative ? -value : value;
    }
  }
  LACONIC_ENFORCE(reader.bytes_read() == payload.size() - head, "expected ",
                  head + reader.bytes_read(), " qsgd payload bytes for ", n, " elements, got ",
                  payload.size());
}

namespace {

QsgdCoding parse_coding(const std::string& coding) {
  if (coding == "fixed") return QsgdCoding::Fixed;
  if (coding == "elias") return QsgdCoding::Elias;
  throw ConfigError(str_cat("qsgd.coding must be one of \"fixed\", \"elias\", got \"", coding,
                            "\""));
}

}  // namespace

QsgdCompressor::QsgdCompressor(QsgdOptions options)
    : WithErrorFeedback(options.error_feedback, static_cast<unsigned>(options.levels),
                        static_cast<std::size_t>(options.bucket_size),
                        parse_coding(options.coding)) {}

}  // namespace laconic::compress
