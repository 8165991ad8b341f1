// The fast paths against the plain loops they replaced: sign packing and decoding in SSE2,
// threshold's branch-free and AVX2 pair writers, TernGrad's blocked draws and table decoding,
// and error feedback's fused passes give the same payload bytes, decoded values and residual
// bits, awkward values (signed zeros, infinities, NaN, elements exactly at tau) included.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/compress/error_feedback.hpp"
#include "engine/compress/onebit.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/sign.hpp"
#include "engine/compress/terngrad.hpp"
#include "engine/compress/threshold.hpp"
#include "engine/compress/topk.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::isas_on_this_cpu;
using laconic::testing::random_gradient;

namespace {

const std::size_t kSizes[] = {1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 1000, 4099, 70001};

// Normal values with signed zeros, values at +-tau, infinities and (if asked) a NaN mixed in.
std::vector<float> awkward_gradient(std::size_t n, unsigned seed, float tau, bool with_nan) {
  auto g = random_gradient(n, seed);
  const float specials[] = {0.0f, -0.0f, tau, -tau, std::nextafter(tau, 10.0f), 1e-40f, -1e-40f, 1e30f, -1e30f};
  for (std::size_t i = 0; i < n; i += 5) g[i] = specials[(i / 5) % std::size(specials)];
  if (n > 2 && n % 2 == 1) g[n / 2] = std::numeric_limits<float>::infinity();
  if (with_nan && n > 3) g[n / 3] = std::numeric_limits<float>::quiet_NaN();
  return g;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Sign bits and per-bit-position double sums, one element at a time, as the format defines them.
struct PlainSigns {
  std::vector<std::uint8_t> bits;
  double positive = 0.0, negative = 0.0;
  std::size_t negatives = 0;
};

PlainSigns plain_signs(const std::vector<float>& v) {
  PlainSigns out;
  out.bits.assign((v.size() + 7) / 8, 0);
  double positive[8] = {}, negative[8] = {};
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool is_negative = v[i] < 0.0f;
    out.bits[i / 8] = static_cast<std::uint8_t>(out.bits[i / 8] | (is_negative << (i % 8)));
    (is_negative ? negative : positive)[i % 8] += static_cast<double>(v[i]);
    out.negatives += is_negative ? 1 : 0;
  }
  for (int j = 0; j < 8; ++j) {
    out.positive += positive[j];
    out.negative += negative[j];
  }
  return out;
}

Payload plain_payload(std::vector<float> header, const std::vector<std::uint8_t>& bits, std::size_t n) {
  Payload p(4 + 4 * header.size());
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(p.data(), &count, 4);
  std::memcpy(p.data() + 4, header.data(), 4 * header.size());
  p.insert(p.end(), bits.begin(), bits.end());
  return p;
}

Payload plain_onebit(const std::vector<float>& v) {
  const PlainSigns s = plain_signs(v);
  const std::size_t positives = v.size() - s.negatives;
  const float mean_positive = positives == 0 ? 0.0f : static_cast<float>(s.positive / static_cast<double>(positives));
  const float mean_negative =
      s.negatives == 0 ? 0.0f : static_cast<float>(s.negative / static_cast<double>(s.negatives));
  return plain_payload({mean_positive, mean_negative}, s.bits, v.size());
}

Payload plain_scaled_sign(const std::vector<float>& v) {
  const PlainSigns s = plain_signs(v);
  const float scale = v.empty() ? 0.0f : static_cast<float>((s.positive - s.negative) / static_cast<double>(v.size()));
  return plain_payload({scale}, s.bits, v.size());
}

// |v| > tau compared in double: the tau the user wrote, not a float near it.
Payload plain_threshold(const std::vector<float>& v, double tau) {
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::fabs(static_cast<double>(v[i])) <= tau)) {
      indices.push_back(static_cast<std::uint32_t>(i));
      values.push_back(v[i]);
    }
  Payload p(8 + 8 * indices.size());
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(v.size()), static_cast<std::uint32_t>(indices.size())};
  std::memcpy(p.data(), header, 8);
  if (!indices.empty()) {
    std::memcpy(p.data() + 8, indices.data(), 4 * indices.size());
    std::memcpy(p.data() + 8 + 4 * indices.size(), values.data(), 4 * values.size());
  }
  return p;
}

// TernGrad one element at a time: a uniform each (when the scale is positive and finite), the
// 2-bit codes LSB-first, zero-padded.
Payload plain_terngrad(const std::vector<float>& v, Rng& rng) {
  float scale = 0.0f;
  bool nan = false;
  for (float x : v) {
    scale = std::fabs(x) > scale ? std::fabs(x) : scale;
    nan = nan || std::isnan(x);
  }
  if (nan) scale = std::numeric_limits<float>::quiet_NaN();
  Payload p(8 + (2 * v.size() + 7) / 8, 0);
  const auto count = static_cast<std::uint32_t>(v.size());
  std::memcpy(p.data(), &count, 4);
  std::memcpy(p.data() + 4, &scale, 4);
  if (!(scale > 0.0f && std::isfinite(scale))) return p;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool keep = rng.uniform() < std::fabs(v[i]) / scale;
    const unsigned code = keep ? (std::signbit(v[i]) ? 2u : 1u) : 0u;
    p[8 + i / 4] = static_cast<std::uint8_t>(p[8 + i / 4] | (code << (2 * (i % 4))));
  }
  return p;
}

// Error feedback over `steps` steps twice: through the codec's fused passes and through the
// generic ones (the codec seen as a plain Compressor); payloads and residuals must agree.
template <class Codec>
void check_fused_error_feedback(Codec fused_codec, Codec generic_codec, unsigned steps, bool with_nan) {
  for (std::size_t n : kSizes) {
    ErrorFeedback fused, generic;
    for (unsigned step = 0; step < steps; ++step) {
      const auto g = awkward_gradient(n, static_cast<unsigned>(n * 7 + step), 0.5f, with_nan && step == steps - 1);
      Payload a, b;
      fused.compress(fused_codec, g, a);
      generic.compress(static_cast<Compressor&>(generic_codec), g, b);
      INFO("n = " << n << ", step " << step);
      REQUIRE(a == b);
      REQUIRE(same_bits(fused.residual(), generic.residual()));
    }
  }
}

}  // namespace

TEST_CASE("onebit and ef_signsgd payloads are the plain loop's, byte for byte", "[compress][fused]") {
  for (std::size_t n : kSizes)
    for (bool with_nan : {false, true}) {
      const auto g = awkward_gradient(n, static_cast<unsigned>(n), 0.5f, with_nan);
      OnebitCodec onebit;
      ScaledSignCodec scaled;
      Payload a, b;
      onebit.compress(g, a);
      scaled.compress(g, b);
      INFO("n = " << n << (with_nan ? " with a NaN" : ""));
      REQUIRE(a == plain_onebit(g));
      REQUIRE(b == plain_scaled_sign(g));
    }
}

TEST_CASE("sign bits decode as the plain loop adds them", "[compress][fused]") {
  for (std::size_t n : kSizes) {
    const auto g = awkward_gradient(n, static_cast<unsigned>(n + 1), 0.5f, false);
    const PlainSigns s = plain_signs(awkward_gradient(n, static_cast<unsigned>(n + 2), 0.5f, false));
    std::vector<float> dense = g, plain = g;
    add_sign_bits(s.bits.data(), 0.25f, -3.0f, dense);
    for (std::size_t i = 0; i < n; ++i) plain[i] += ((s.bits[i / 8] >> (i % 8)) & 1u) ? -3.0f : 0.25f;
    INFO("n = " << n);
    REQUIRE(same_bits(dense, plain));
  }
}

TEST_CASE("error feedback's fused passes give the generic passes' payloads and residuals", "[compress][fused]") {
  check_fused_error_feedback(OnebitCodec(), OnebitCodec(), 4, true);
  check_fused_error_feedback(ScaledSignCodec(), ScaledSignCodec(), 4, true);
  check_fused_error_feedback(TopkCodec(StepRatio(0.05)), TopkCodec(StepRatio(0.05)), 4, false);
  for (Isa isa : isas_on_this_cpu())
    check_fused_error_feedback(ThresholdCodec(0.5, isa), ThresholdCodec(0.5, isa), 4, true);
}

TEST_CASE("threshold's pair writers give the plain loop's payload", "[compress][fused][threshold]") {
  for (Isa isa : isas_on_this_cpu())
    for (double tau : {1e-3, 0.5, 2.33, 1e31})
      for (std::size_t n : kSizes) {
        const auto g = awkward_gradient(n, static_cast<unsigned>(n + 3), static_cast<float>(tau), n % 2 == 0);
        ThresholdCodec codec(tau, isa);
        Payload payload;
        codec.compress(g, payload);
        INFO("n = " << n << ", tau " << tau << ", " << isa_name(isa));
        REQUIRE(payload == plain_threshold(g, tau));
      }
}

// With AVX2, gradients from 2^16 elements are coded in four lanes, each a stretch of the one
// sequence of draws; the sizes put every lane's tail (0 to 3 elements past a whole byte, and the
// last lane's shorter stretch) through the sequential loop.
TEST_CASE("terngrad's payloads and decoding are the plain loop's", "[compress][fused][terngrad]") {
  std::vector<std::size_t> sizes(std::begin(kSizes), std::end(kSizes));
  for (std::size_t n : {65535u, 65536u, 65537u, 65538u, 65539u, 65551u, 262147u}) sizes.push_back(n);
  for (Isa isa : isas_on_this_cpu())
    for (std::size_t n : sizes)
      for (bool with_nan : {false, true}) {
        TerngradCodec codec(isa);
        codec.set_seed(7, 1);
        Rng rng(derive_seed(7, streams::kTerngradRounding + 1));
        for (unsigned step = 0; step < 3; ++step) {
          // Finite values only, but for the NaN case: an infinity would make the scale infinite.
          auto g = random_gradient(n, static_cast<unsigned>(n + step));
          for (std::size_t i = 0; i < n; i += 7) g[i] = (i / 7) % 2 == 0 ? 0.0f : -0.0f;
          if (with_nan && n > 3) g[n / 3] = std::numeric_limits<float>::quiet_NaN();
          Payload payload;
          codec.compress(g, payload);
          INFO("n = " << n << ", step " << step << (with_nan ? " with a NaN" : "") << ", " << isa_name(isa));
          REQUIRE(payload == plain_terngrad(g, rng));
          const float scale = [&] {
            float f;
            std::memcpy(&f, payload.data() + 4, 4);
            return f;
          }();
          const float values[3] = {scale * 0.0f, scale, -scale};
          std::vector<float> dense = g, plain = g;
          codec.decompress_add(payload, dense);
          for (std::size_t i = 0; i < n; ++i) plain[i] += values[(payload[8 + i / 4] >> (2 * (i % 4))) & 3u];
          REQUIRE(same_bits(dense, plain));
        }
      }
}
