#include "engine/compress/uniform.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/bitpack.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

std::vector<FieldSpec> UniformOptions::fields() {
  return {
      {"bits", FieldType::Int, std::int64_t{8},
       "bits per element, in [1, 16]: 2^bits equal bins between the gradient's min and max"},
      {"error_feedback", FieldType::Bool, false,
       "accumulate the quantization error and add it to the next gradient"},
  };
}

UniformOptions UniformOptions::from(const ComponentSpec& spec) {
  UniformOptions o;
  o.bits = spec.integer("bits");
  o.error_feedback = spec.flag("error_feedback");
  if (o.bits < 1 || o.bits > 16)
    throw ConfigError(str_cat("uniform.bits must be in [1, 16], got ", o.bits));
  return o;
}

std::size_t uniform_payload_bytes(std::size_t n, unsigned bits) {
  return 12 + packed_bytes(n, bits);
}

float uniform_bin_width(float min, float max, unsigned bits) {
  // Dividing by a power of two is exact (short of subnormals), so sender and receiver agree.
  return (max - min) / static_cast<float>(1u << bits);
}

UniformCodec::UniformCodec(unsigned bits) : bits_(bits) {
  LACONIC_ENFORCE(bits >= 1 && bits <= 16, "uniform bits must be in [1, 16], got ", bits);
}

void UniformCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "uniform handles at most ",
                  "2^32-1 elements, got ", n);
  float lo = 0.0f, hi = 0.0f;
  bool nan = false;
  if (n > 0) lo = hi = gradient[0];
  for (float x : gradient) {
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    nan = nan || x != x;
  }
  if (nan) lo = hi = std::numeric_limits<float>::quiet_NaN();

  payload.clear();  // keeps the capacity: no allocation in steady state
  payload.reserve(uniform_payload_bytes(n, bits_));
  payload.resize(12);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &lo, 4);
  std::memcpy(payload.data() + 8, &hi, 4);

  const std::uint32_t top = (1u << bits_) - 1;
  // The bin position in double: x - lo is then exact and t is off by ~1e-16 of a bin, where in
  // float it is off by up to 2^bits * 2^-24 of a bin (0.4% at 16 bits), moving elements near an
  // edge into the neighbouring bin, beyond the promised width/2.
  const double range = static_cast<double>(hi) - static_cast<double>(lo);
  BitWriter writer(payload);
  if (range > 0.0 && std::isfinite(range)) {
    const double bins_per_unit = static_cast<double>(1u << bits_) / range;
    const double base = lo;
    for (float x : gradient) {
      // x >= lo, so t >= 0; t reaches 2^bits only at x = max, which belongs to the last bin.
      const double t = (static_cast<double>(x) - base) * bins_per_unit;
      const std::uint32_t index = t >= top ? top : static_cast<std::uint32_t>(t);
      writer.write(index, bits_);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) writer.write(0, bits_);
  }
  writer.finish();
}

void UniformCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  LACONIC_ENFORCE(payload.size() >= 12, "expected a uniform payload of at least 12 bytes, got ",
                  payload.size());
  std::uint32_t count;
  float lo, hi;
  std::memcpy(&count, payload.data(), 4);
  std::memcpy(&lo, payload.data() + 4, 4);
  std::memcpy(&hi, payload.data() + 8, 4);
  const std::size_t n = count;
  LACONIC_ENFORCE(n == dense.size(), "expected a payload for ", dense.size(),
                  " elements, got one for ", n);
  LACONIC_ENFORCE(payload.size() == uniform_payload_bytes(n, bits_), "expected ",
                  uniform_payload_bytes(n, bits_), " uniform payload bytes for ", n,
                  " elements of ", bits_, " bits, got ", payload.size());
  const float width = uniform_bin_width(lo, hi, bits_);
  BitReader reader(std::span<const std::uint8_t>(payload).subspan(12));
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t index = reader.read(bits_);
    dense[i] += lo + (static_cast<float>(index) + 0.5f) * width;
  }
}

}  // namespace laconic::compress
