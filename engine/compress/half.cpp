#include "engine/compress/half.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "engine/compress/element_math.hpp"
#include "engine/compress/payload_header.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

// The per-element math is engine/compress/element_math.hpp's, which the CUDA kernels share.
std::uint16_t float_to_fp16(float value) { return element::fp16_bits(value); }

float fp16_to_float(std::uint16_t bits) { return element::fp16_value(bits); }

std::uint16_t float_to_bf16(float value) { return element::bf16_bits(value); }

float bf16_to_float(std::uint16_t bits) { return element::bf16_value(bits); }

bool fp16_hardware_available() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

namespace {

void fp16_encode_portable(std::span<const float> in, std::uint8_t* out) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint16_t bits = float_to_fp16(in[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

void fp16_decode_add_portable(const std::uint8_t* in, std::span<float> dense) {
  for (std::size_t i = 0; i < dense.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    dense[i] += fp16_to_float(bits);
  }
}

#if defined(__x86_64__) || defined(__i386__)
// vcvtps2ph with an explicit round-to-nearest-even ignores MXCSR; like float_to_fp16 it sends
// 65520 and above to infinity, rounds subnormals, and keeps a NaN's sign and top payload bits
// with the quiet bit set. vcvtph2ps is exact. The tests compare both paths bit for bit.
[[gnu::target("avx2,f16c")]] void fp16_encode_f16c(std::span<const float> in, std::uint8_t* out) {
  const std::size_t whole = in.size() - in.size() % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in.data() + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), half);
  }
  fp16_encode_portable(in.subspan(whole), out + 2 * whole);
}

[[gnu::target("avx2,f16c")]] void fp16_decode_add_f16c(const std::uint8_t* in, std::span<float> dense) {
  const std::size_t whole = dense.size() - dense.size() % 8;
  float* d = dense.data();
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m256 value = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i)));
    _mm256_storeu_ps(d + i, _mm256_add_ps(_mm256_loadu_ps(d + i), value));
  }
  fp16_decode_add_portable(in + 2 * whole, dense.subspan(whole));
}
#endif

}  // namespace

void fp16_encode(std::span<const float> in, std::uint8_t* out, bool hardware) {
#if defined(__x86_64__) || defined(__i386__)
  if (hardware) {
    LACONIC_ENFORCE(fp16_hardware_available(), "the F16C fp16 path needs AVX2 and F16C");
    return fp16_encode_f16c(in, out);
  }
#else
  LACONIC_ENFORCE(!hardware, "the F16C fp16 path needs an x86 CPU");
#endif
  fp16_encode_portable(in, out);
}

void fp16_decode_add(const std::uint8_t* in, std::span<float> dense, bool hardware) {
#if defined(__x86_64__) || defined(__i386__)
  if (hardware) {
    LACONIC_ENFORCE(fp16_hardware_available(), "the F16C fp16 path needs AVX2 and F16C");
    return fp16_decode_add_f16c(in, dense);
  }
#else
  LACONIC_ENFORCE(!hardware, "the F16C fp16 path needs an x86 CPU");
#endif
  fp16_decode_add_portable(in, dense);
}

void fp16_decode(const std::uint8_t* in, std::span<float> out, bool hardware) {
  std::fill(out.begin(), out.end(), 0.0f);
  fp16_decode_add(in, out, hardware);
}

void bf16_encode(std::span<const float> in, std::uint8_t* out) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint16_t bits = float_to_bf16(in[i]);
    std::memcpy(out + 2 * i, &bits, 2);
  }
}

void bf16_decode(const std::uint8_t* in, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    out[i] = bf16_to_float(bits);
  }
}

std::size_t half_payload_bytes(std::size_t n) { return 4 + 2 * n; }

namespace {

// The header and its checks around a bulk conversion `code`.
template <class Encode>
void encode_half(const char* name, std::span<const float> gradient, Payload& payload, Encode code) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), name, " handles at most 2^32-1 elements, got ", n);
  payload.resize(half_payload_bytes(n));
  const auto header = static_cast<std::uint32_t>(n);
  std::memcpy(payload.data(), &header, 4);
  code(gradient, payload.data() + 4);
}

template <class DecodeAdd>
void decode_half_add(const char* name, const Payload& payload, std::span<float> dense, DecodeAdd decode_add) {
  const std::size_t n = read_element_count(payload, 4, dense.size(), name);
  LACONIC_ENFORCE(payload.size() == half_payload_bytes(n), "expected ", half_payload_bytes(n),
                  " payload bytes for n=", n, ", got ", payload.size());
  decode_add(payload.data() + 4, dense);
}

}  // namespace

void Fp16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half("fp16", gradient, payload,
              [&](std::span<const float> in, std::uint8_t* out) { fp16_encode(in, out, hardware_); });
}

void Fp16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add("fp16", payload, dense,
                  [&](const std::uint8_t* in, std::span<float> out) { fp16_decode_add(in, out, hardware_); });
}

void Bf16Compressor::compress(std::span<const float> gradient, Payload& payload) {
  encode_half("bf16", gradient, payload, [](std::span<const float> in, std::uint8_t* out) { bf16_encode(in, out); });
}

void Bf16Compressor::decompress_add(const Payload& payload, std::span<float> dense) const {
  decode_half_add("bf16", payload, dense, [](const std::uint8_t* in, std::span<float> out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, in + 2 * i, 2);
      out[i] += bf16_to_float(bits);
    }
  });
}

namespace {

class Fp16WireCodec : public WireCodec {
 public:
  std::size_t bytes(std::size_t n) const override { return 2 * n; }
  void encode(std::span<const float> in, std::span<std::uint8_t> out) const override {
    fp16_encode(in, out.data(), hardware_);
  }
  void decode(std::span<const std::uint8_t> in, std::span<float> out) const override {
    fp16_decode(in.data(), out, hardware_);
  }

 private:
  bool hardware_ = fp16_hardware_available();
};

class Bf16WireCodec : public WireCodec {
 public:
  std::size_t bytes(std::size_t n) const override { return 2 * n; }
  void encode(std::span<const float> in, std::span<std::uint8_t> out) const override { bf16_encode(in, out.data()); }
  void decode(std::span<const std::uint8_t> in, std::span<float> out) const override { bf16_decode(in.data(), out); }
};

}  // namespace

const WireCodec& fp16_wire_codec() {
  static const Fp16WireCodec codec;
  return codec;
}

const WireCodec& bf16_wire_codec() {
  static const Bf16WireCodec codec;
  return codec;
}

}  // namespace laconic::compress
