#include "engine/compress/terngrad.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/bitpack.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

OptionFields<TerngradOptions> TerngradOptions::fields() {
  return OptionFields<TerngradOptions>().flag("error_feedback", &TerngradOptions::error_feedback,
                                              "accumulate the ternarization error and add it to the next gradient");
}

std::size_t terngrad_payload_bytes(std::size_t n) { return 8 + packed_bytes(n, 2); }

void TerngradCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "terngrad handles at most ", "2^32-1 elements, got ",
                  n);
  float scale = 0.0f;
  bool nan = false;
  for (float g : gradient) {
    const float m = std::fabs(g);
    scale = m > scale ? m : scale;
    nan = nan || m != m;
  }
  if (nan) scale = std::numeric_limits<float>::quiet_NaN();

  payload.clear();  // keeps the capacity: no allocation in steady state
  payload.reserve(terngrad_payload_bytes(n));
  payload.resize(8);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &count, 4);
  std::memcpy(payload.data() + 4, &scale, 4);

  BitWriter writer(payload);
  if (scale > 0.0f && std::isfinite(scale)) {
    // A local copy: byte stores into the payload may alias any member, which would force the
    // generator's state through memory on every draw.
    Rng rng = rng_;
    for (float g : gradient) {
      // A division, not a multiplication by 1/scale: the largest element gets p = 1 exactly.
      const float p = std::fabs(g) / scale;
      // Branch-free: keep and sign are coin flips the predictor cannot learn.
      const std::uint32_t keep = rng.uniform() < p ? 1u : 0u;
      const std::uint32_t negative = std::bit_cast<std::uint32_t>(g) >> 31;
      writer.write(keep * (1u + negative), 2);
    }
    rng_ = rng;
  } else {
    for (std::size_t i = 0; i < n; ++i) writer.write(0, 2);
  }
  writer.finish();
}

void TerngradCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  const std::size_t n = read_element_count(payload, 8, dense.size(), "terngrad");
  const float scale = header_float(payload, 4);
  LACONIC_ENFORCE(payload.size() == terngrad_payload_bytes(n), "expected ", terngrad_payload_bytes(n),
                  " terngrad payload bytes for ", n, " elements, got ", payload.size());
  // scale * 0 rather than a plain 0 for code 0: an inf or NaN scale reaches every element.
  const float values[3] = {scale * 0.0f, scale, -scale};
  BitReader reader(std::span<const std::uint8_t>(payload).subspan(8));
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t code = reader.read(2);
    LACONIC_ENFORCE(code != 3, "invalid terngrad code 3 for element ", i);
    dense[i] += values[code];
  }
}

}  // namespace laconic::compress
