#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include "engine/compress/sign.hpp"
#include "engine/core/error.hpp"
#include "engine/core/registry.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The registry lines builtin.cpp gets for these compressors, so that option errors are checked
// the way a user meets them.
Registry<Compressor> sign_registry() {
  Registry<Compressor> r("compressor");
  r.add<SignSgdCompressor, SignSgdOptions>("signsgd", "signs");
  r.add<SignumCompressor, SignumOptions>("signum", "signs of momentum");
  r.add<EfSignSgdCompressor, EfSignSgdOptions>("ef_signsgd", "scaled signs");
  return r;
}

float reference_sign(float v) { return v < 0.0f ? -1.0f : 1.0f; }

// Bit i of the packed signs, read the obvious way.
bool packed_bit(const Payload& p, std::size_t header, std::size_t i) { return (p[header + i / 8] >> (i % 8)) & 1; }

// ||p||_1 / n, summed left to right in double.
float reference_scale(const std::vector<float>& p) {
  if (p.empty()) return 0.0f;
  double l1 = 0.0;
  for (float v : p) l1 += std::fabs(static_cast<double>(v));
  return static_cast<float>(l1 / static_cast<double>(p.size()));
}

float payload_float(const Payload& p, std::size_t offset) {
  float v;
  std::memcpy(&v, p.data() + offset, 4);
  return v;
}

}  // namespace

TEST_CASE("signsgd sends one bit per element, set for negatives, and decodes to +1 or -1", "[compress][sign]") {
  SignSgdCompressor signsgd;
  CHECK(signsgd.name() == "signsgd");
  CHECK_FALSE(signsgd.summable());
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 1000u, 12345u}) {
    auto g = random_gradient(n, static_cast<unsigned>(n) + 3);
    if (n > 2) g[1] = 0.0f, g[2] = -0.0f;  // one bit cannot say zero: both go out as +1
    Payload payload;
    signsgd.compress(g, payload);
    CHECK(payload.size() == 4 + (n + 7) / 8);
    CHECK(payload.size() == sign_payload_bytes(n));
    const auto dense = decode(signsgd, payload, n);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(packed_bit(payload, 4, i) == (g[i] < 0.0f));
      REQUIRE(dense[i] == reference_sign(g[i]));
    }
    for (std::size_t i = n; i < 8 * ((n + 7) / 8); ++i)
      REQUIRE_FALSE(packed_bit(payload, 4, i));  // padding bits stay zero
  }
}

TEST_CASE("the majority vote of 3 workers' signs equals a reference vote", "[compress][sign][vote]") {
  const std::size_t n = 5001;
  for (const char* name : {"signsgd", "signum"}) {
    INFO(name);
    auto registry = sign_registry();
    std::vector<std::vector<float>> grads;
    std::vector<float> sum(n, 0.0f);
    std::unique_ptr<Compressor> any;
    for (unsigned w = 0; w < 3; ++w) {
      auto worker = registry.create({"compressor", name, {}});  // each worker keeps its state
      grads.push_back(random_gradient(n, 40 + w));
      Payload payload;
      worker->compress(grads.back(), payload);  // signum's first step: sign((1-b) g) = sign(g)
      worker->decompress_add(payload, sum);
      any = std::move(worker);
    }
    any->aggregate(sum, 3);
    for (std::size_t i = 0; i < n; ++i) {
      int negatives = 0;
      for (const auto& g : grads) negatives += g[i] < 0.0f;
      REQUIRE(sum[i] == (negatives >= 2 ? -1.0f : 1.0f));
    }
  }
}

TEST_CASE("the majority vote of an even number of workers is 0 on a tie", "[compress][sign][vote]") {
  SignSgdCompressor signsgd;
  const std::vector<float> a = {1.0f, -1.0f, 2.0f, -3.0f}, b = {-1.0f, -1.0f, 5.0f, 0.5f};
  std::vector<float> sum(4, 0.0f);
  Payload payload;
  signsgd.compress(a, payload);
  signsgd.decompress_add(payload, sum);
  signsgd.compress(b, payload);
  signsgd.decompress_add(payload, sum);
  signsgd.aggregate(sum, 2);
  CHECK(sum == std::vector<float>{0.0f, -1.0f, 1.0f, 0.0f});
}

TEST_CASE("signum momentum matches a reference loop and is signsgd at momentum 0", "[compress][sign][signum]") {
  const std::size_t n = 3000;
  for (double momentum : {0.0, 0.5, 0.9, 0.99}) {
    INFO("momentum " << momentum);
    SignumCompressor signum(SignumOptions{momentum});
    SignSgdCompressor signsgd;
    // The reference: m = b*m + (1-b)*g in float32, m starting at zero.
    const auto b = static_cast<float>(momentum);
    const auto one_minus_b = static_cast<float>(1.0 - momentum);
    std::vector<float> m(n, 0.0f);
    for (unsigned step = 0; step < 12; ++step) {
      const auto g = random_gradient(n, 700 + step);
      for (std::size_t i = 0; i < n; ++i) m[i] = b * m[i] + one_minus_b * g[i];
      Payload payload;
      signum.compress(g, payload);
      CHECK(payload.size() == sign_payload_bytes(n));
      const auto sent = decode(signum, payload, n);
      const auto buffer = signum.momentum();
      REQUIRE(buffer.size() == n);
      for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(buffer[i] == m[i]);
        REQUIRE(sent[i] == reference_sign(m[i]));
      }
      if (momentum == 0.0) {
        Payload plain;
        signsgd.compress(g, plain);
        REQUIRE(plain == payload);
      }
    }
  }
}

TEST_CASE("ef_signsgd sends ||p||_1/n times the signs, in 8 header bytes plus one bit each",
          "[compress][sign][ef_signsgd]") {
  ScaledSignCodec codec;
  for (std::size_t n : {1u, 7u, 8u, 9u, 1000u, 12345u}) {
    const auto g = random_gradient(n, static_cast<unsigned>(n) + 17);
    Payload payload;
    codec.compress(g, payload);
    CHECK(payload.size() == 8 + (n + 7) / 8);
    CHECK(payload.size() == scaled_sign_payload_bytes(n));
    // The codec sums in another order (eight double lanes) before rounding to float: at most one
    // float ulp (relative 2^-23) apart from the left-to-right double sum.
    const float scale = payload_float(payload, 4);
    CHECK(std::fabs(scale - reference_scale(g)) <= std::ldexp(reference_scale(g), -23));
    const auto dense = decode(codec, payload, n);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(packed_bit(payload, 8, i) == (g[i] < 0.0f));
      REQUIRE(dense[i] == reference_sign(g[i]) * scale);
    }
  }
}

TEST_CASE("ef_signsgd with error feedback: sent plus residual is what was fed in, every step",
          "[compress][sign][ef_signsgd][error_feedback]") {
  const std::size_t n = 5000;
  EfSignSgdCompressor ef(EfSignSgdOptions{true});
  CHECK(ef.name() == "ef_signsgd");
  CHECK_FALSE(ef.summable());
  std::vector<float> previous_residual(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    const auto g = random_gradient(n, 300 + step);
    Payload payload;
    ef.compress(g, payload);
    const auto sent = decode(ef, payload, n);
    const auto residual = ef.residual();
    REQUIRE(residual.size() == n);
    // What p = g + e was, and what the payload must be: the scaled sign of p.
    std::vector<float> fed(n);
    for (std::size_t i = 0; i < n; ++i) fed[i] = g[i] + previous_residual[i];
    const float scale = payload_float(payload, 4);
    CHECK(std::fabs(scale - reference_scale(fed)) <= std::ldexp(reference_scale(fed), -23));
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(sent[i] == reference_sign(fed[i]) * scale);
      // Exact, element-wise: the residual is fed - sent, rounded once to float.
      REQUIRE(residual[i] == fed[i] - sent[i]);
      // sent + residual reproduces fed up to that one rounding: |error| <= 2^-24 |fed - sent|,
      // checked in double where sent + residual is exact. (Exact float equality cannot hold for
      // every input: fl(fed - sent) + sent can differ from fed by that half ulp.)
      const double reconstruction = static_cast<double>(sent[i]) + residual[i];
      REQUIRE(std::fabs(reconstruction - fed[i]) <= std::ldexp(std::fabs(static_cast<double>(fed[i]) - sent[i]), -24));
    }
    previous_residual.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("all-zero gradients: signs go out as +1, the scaled sign as 0 with no residual", "[compress][sign]") {
  const std::vector<float> zeros(100, 0.0f);
  Payload payload;
  SignSgdCompressor signsgd;
  signsgd.compress(zeros, payload);
  CHECK(decode(signsgd, payload, 100) == std::vector<float>(100, 1.0f));
  SignumCompressor signum(SignumOptions{});
  signum.compress(zeros, payload);
  CHECK(decode(signum, payload, 100) == std::vector<float>(100, 1.0f));
  EfSignSgdCompressor ef(EfSignSgdOptions{true});
  for (int step = 0; step < 3; ++step) {
    ef.compress(zeros, payload);
    CHECK(payload_float(payload, 4) == 0.0f);
    CHECK(decode(ef, payload, 100) == zeros);
    CHECK(std::vector<float>(ef.residual().begin(), ef.residual().end()) == zeros);
  }
  // An empty gradient is a header alone, with scale 0.
  EfSignSgdCompressor empty(EfSignSgdOptions{true});
  empty.compress(std::vector<float>{}, payload);
  CHECK(payload.size() == scaled_sign_payload_bytes(0));
  CHECK(payload_float(payload, 4) == 0.0f);
  signsgd.compress(std::vector<float>{}, payload);
  CHECK(payload.size() == 4);
}

TEST_CASE("sign compressors' options name the field and the valid range", "[compress][sign]") {
  auto registry = sign_registry();
  ComponentSpec spec{"compressor", "signum", {{"momentum", 1.2}}};
  REQUIRE_THROWS_WITH(registry.create(spec), "signum.momentum must be in [0, 1), got 1.2");
  spec.fields["momentum"] = 1.0;
  REQUIRE_THROWS_WITH(registry.create(spec), "signum.momentum must be in [0, 1), got 1");
  spec.fields["momentum"] = -0.1;
  REQUIRE_THROWS_AS(registry.create(spec), ConfigError);
  spec.fields["momentum"] = std::int64_t{0};
  CHECK(registry.create(spec)->name() == "signum");
  CHECK(registry.resolve({"compressor", "signum", {}}).number("momentum") == 0.9);
  CHECK(registry.resolve({"compressor", "ef_signsgd", {}}).flag("error_feedback"));
  REQUIRE_THROWS_AS(registry.create({"compressor", "signsgd", {{"momentum", 0.5}}}), ConfigError);
  CHECK(registry.create({"compressor", "signsgd", {}})->name() == "signsgd");
}

TEST_CASE("a sign payload for another length or of the wrong size is refused", "[compress][sign]") {
  SignSgdCompressor signsgd;
  ScaledSignCodec scaled;
  Payload payload;
  signsgd.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f), right(100, 0.0f);
  REQUIRE_THROWS_WITH(signsgd.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  payload.push_back(0);
  REQUIRE_THROWS_WITH(signsgd.decompress_add(payload, right),
                      Catch::Contains("expected 17 payload bytes for n=100, got 18"));
  scaled.compress(random_gradient(100, 1), payload);
  payload.resize(7);
  REQUIRE_THROWS_WITH(scaled.decompress_add(payload, right), Catch::Contains("of at least 8 bytes, got 7"));
}
