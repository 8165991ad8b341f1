#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/threshold.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The obviously-correct reference: keep g[i] when |g[i]| > tau (compared in double).
std::vector<float> reference_threshold(const std::vector<float>& g, double tau) {
  std::vector<float> out(g.size(), 0.0f);
  for (std::size_t i = 0; i < g.size(); ++i)
    if (std::fabs(static_cast<double>(g[i])) > tau) out[i] = g[i];
  return out;
}

std::size_t count_above(const std::vector<float>& g, double tau) {
  std::size_t count = 0;
  for (float v : g) count += std::fabs(static_cast<double>(v)) > tau;
  return count;
}

ComponentSpec threshold_spec(double tau) {
  return {"compressor", "threshold", {{"tau", tau}, {"error_feedback", true}}};
}

}  // namespace

TEST_CASE("threshold keeps exactly the elements whose magnitude exceeds tau", "[compress][threshold]") {
  for (std::size_t n : {1u, 7u, 100u, 1000u, 61706u}) {
    for (double tau : {0.001, 0.5, 1.0, 2.5, 10.0}) {
      auto g = random_gradient(n, static_cast<unsigned>(n * 3 + tau * 100));
      ThresholdCodec codec(tau);
      Payload payload;
      codec.compress(g, payload);
      const std::size_t count = count_above(g, tau);
      CHECK(payload.size() == threshold_payload_bytes(count));
      CHECK(payload.size() == 8 + 8 * count);
      CHECK(decode(codec, payload, n) == reference_threshold(g, tau));
      // Indices in the payload are ascending.
      std::uint32_t header[2];
      std::memcpy(header, payload.data(), 8);
      CHECK(header[0] == n);
      CHECK(header[1] == count);
      for (std::size_t i = 1; i < count; ++i) {
        std::uint32_t a, b;
        std::memcpy(&a, payload.data() + 8 + 4 * (i - 1), 4);
        std::memcpy(&b, payload.data() + 8 + 4 * i, 4);
        REQUIRE(a < b);
      }
    }
  }
}

TEST_CASE("threshold compares strictly and without rounding tau to float", "[compress][threshold]") {
  const double tau = 0.5;
  std::vector<float> g = {0.5f, -0.5f, 0.50000006f, -0.50000006f, 0.0f, 0.49999997f};
  ThresholdCodec codec(tau);
  Payload payload;
  codec.compress(g, payload);
  CHECK(decode(codec, payload, g.size()) == std::vector<float>{0.0f, 0.0f, 0.50000006f, -0.50000006f, 0.0f, 0.0f});
  // 0.1f is above the double 0.1 (0.100000001490116...), so it is sent; a float tau would tie.
  ThresholdCodec tenth(0.1);
  std::vector<float> h = {0.1f, -0.1f};
  tenth.compress(h, payload);
  CHECK(payload.size() == threshold_payload_bytes(2));

  // Floats on either side of each tau, including taus below the smallest float and above the
  // largest, against the double comparison of the reference.
  for (double t : {0.1, 0.3, 0.7, 1e-3, 0.5, 1e-50, 3.4028234663852886e38, 1e300}) {
    const float f = static_cast<float>(std::min(t, 3.4028234663852886e38));
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> near = {f,
                               std::nextafter(f, 0.0f),
                               std::nextafter(f, inf),
                               -f,
                               -std::nextafter(f, inf),
                               inf,
                               0.0f,
                               std::numeric_limits<float>::denorm_min()};
    ThresholdCodec at(t);
    at.compress(near, payload);
    INFO("tau=" << t);
    CHECK(decode(at, payload, near.size()) == reference_threshold(near, t));
  }
}

TEST_CASE("a threshold payload with nothing above tau is just the header", "[compress][threshold]") {
  ThresholdCodec codec(10.0);
  auto g = random_gradient(1000, 5);  // standard normal: nothing near 10
  Payload payload;
  codec.compress(g, payload);
  CHECK(payload.size() == 8);
  CHECK(payload.size() == threshold_payload_bytes(0));
  std::vector<float> dense(1000, 2.0f);
  codec.decompress_add(payload, dense);
  CHECK(dense == std::vector<float>(1000, 2.0f));

  Payload empty;
  codec.compress(std::span<const float>{}, empty);
  CHECK(empty.size() == 8);
  std::vector<float> nothing;
  codec.decompress_add(empty, nothing);
}

TEST_CASE("threshold sends NaN and infinities on", "[compress][threshold]") {
  std::vector<float> g = {0.0f, std::nanf(""), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), 1e-6f};
  ThresholdCodec codec(0.001);
  Payload payload;
  codec.compress(g, payload);
  CHECK(payload.size() == threshold_payload_bytes(3));
  auto dense = decode(codec, payload, g.size());
  CHECK(std::isnan(dense[1]));
  CHECK(dense[2] == g[2]);
  CHECK(dense[3] == g[3]);
  CHECK(dense[4] == 0.0f);
}

TEST_CASE("threshold is not summable", "[compress][threshold]") {
  CHECK_FALSE(ThresholdCompressor(ThresholdOptions{}).summable());
  CHECK_FALSE(ThresholdCodec(0.1).summable());
}

TEST_CASE("threshold with error feedback: sent plus residual equals what was fed in",
          "[compress][threshold][error_feedback]") {
  const std::size_t n = 5000;
  ThresholdCompressor threshold(ThresholdOptions{1.5, true});
  std::vector<float> previous_residual(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    auto g = random_gradient(n, 100 + step);
    Payload payload;
    threshold.compress(g, payload);
    std::vector<float> corrected(n);
    for (std::size_t i = 0; i < n; ++i) corrected[i] = g[i] + previous_residual[i];
    CHECK(payload.size() == threshold_payload_bytes(count_above(corrected, 1.5)));
    auto sent = decode(threshold, payload, n);
    CHECK(sent == reference_threshold(corrected, 1.5));
    auto residual = threshold.residual();
    REQUIRE(residual.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(sent[i] + residual[i] == corrected[i]);
      REQUIRE(std::fabs(residual[i]) <= 1.5f);  // what stays behind is at most tau
    }
    previous_residual.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("threshold error feedback sends small gradients once they add up past tau",
          "[compress][threshold][error_feedback]") {
  // 0.25 per step against tau = 0.9: sums 0.25, 0.5, 0.75 stay, 1.0 goes, then again.
  std::vector<float> g(10, 0.25f);
  ThresholdCompressor with(ThresholdOptions{0.9, true}), without(ThresholdOptions{0.9, false});
  std::vector<std::size_t> sizes_with, sizes_without;
  for (int step = 0; step < 8; ++step) {
    Payload p;
    with.compress(g, p);
    sizes_with.push_back(p.size());
    if (p.size() > 8) CHECK(decode(with, p, g.size()) == std::vector<float>(10, 1.0f));
    without.compress(g, p);
    sizes_without.push_back(p.size());
  }
  const std::size_t full = threshold_payload_bytes(10), empty = threshold_payload_bytes(0);
  CHECK(sizes_with == std::vector<std::size_t>{empty, empty, empty, full, empty, empty, empty, full});
  CHECK(sizes_without == std::vector<std::size_t>(8, empty));
}

TEST_CASE("threshold options name the field and the valid range", "[compress][threshold]") {
  REQUIRE_THROWS_AS(ThresholdOptions::fields().read(threshold_spec(0.0)), ConfigError);
  REQUIRE_THROWS_WITH(ThresholdOptions::fields().read(threshold_spec(0.0)), "threshold.tau must be in (0, inf), got 0");
  REQUIRE_THROWS_WITH(ThresholdOptions::fields().read(threshold_spec(-0.5)),
                      "threshold.tau must be in (0, inf), got -0.5");
  REQUIRE_THROWS_AS(ThresholdOptions::fields().read(threshold_spec(std::numeric_limits<double>::infinity())),
                    ConfigError);
  REQUIRE_THROWS_AS(ThresholdOptions::fields().read(threshold_spec(std::nan(""))), ConfigError);
  ComponentInfo info{"compressor", "threshold", "", ThresholdOptions::fields()};
  auto defaults = ThresholdOptions::fields().read(info.resolve({"compressor", "threshold", {}}));
  CHECK(defaults.tau == 0.001);
  CHECK(defaults.error_feedback);
}

TEST_CASE("a threshold payload for another length or with a bad index is refused", "[compress][threshold]") {
  ThresholdCodec codec(0.5);
  Payload payload;
  auto g = random_gradient(100, 1);
  codec.compress(g, payload);
  const std::size_t count = count_above(g, 0.5);
  REQUIRE(count > 0);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  std::vector<float> dense(100, 0.0f);
  Payload truncated(payload.begin(), payload.end() - 3);
  REQUIRE_THROWS_WITH(codec.decompress_add(truncated, dense),
                      Catch::Contains("expected " + std::to_string(8 + 8 * count) + " payload bytes for k=" +
                                      std::to_string(count) + ", got " + std::to_string(8 + 8 * count - 3)));
  Payload tiny(7);
  REQUIRE_THROWS_WITH(codec.decompress_add(tiny, dense), Catch::Contains("at least 8 bytes, got 7"));
  const std::uint32_t bad = 4000;
  std::memcpy(payload.data() + 8, &bad, 4);
  REQUIRE_THROWS_WITH(codec.decompress_add(payload, dense),
                      Catch::Contains("payload index 4000 out of range for 100 elements"));
}
