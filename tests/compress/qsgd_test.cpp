#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "compress_test_support.hpp"
#include "engine/compress/qsgd.hpp"
#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::isas_on_this_cpu;
using laconic::testing::random_gradient;

namespace {

struct Reference {
  std::vector<float> decoded;
  std::vector<std::uint32_t> levels;
};

// QSGD as the paper writes it, one bucket at a time, with the same draws as the codec: element i
// of a call gets uniform i of a block of n draws rounded up to a whole UniformStream block. The
// norm is the plain sequential double sum; the codec's eight partial sums round to the same
// float except with probability ~2^-29 per bucket (checked below), so for these fixed inputs the
// comparison is exact.
Reference reference_qsgd(const std::vector<float>& g, unsigned s, std::size_t bucket, UniformStream& rng) {
  Reference out{std::vector<float>(g.size(), 0.0f), std::vector<std::uint32_t>(g.size(), 0)};
  std::vector<float> u((g.size() + UniformStream::kBlock - 1) / UniformStream::kBlock * UniformStream::kBlock);
  rng.fill(u.data(), u.size());
  for (std::size_t begin = 0; begin < g.size(); begin += bucket) {
    const std::size_t end = std::min(g.size(), begin + bucket);
    double squares = 0.0;
    for (std::size_t i = begin; i < end; ++i) squares += double(g[i]) * double(g[i]);
    const auto norm = static_cast<float>(std::sqrt(squares));
    if (norm == 0.0f) continue;
    for (std::size_t i = begin; i < end; ++i) {
      const float r = std::min(std::fabs(g[i]) * (float(s) / norm), float(s));
      const float lower = std::floor(r);
      const bool up = u[i] < r - lower;
      const auto level = static_cast<std::uint32_t>(lower) + (up ? 1 : 0);
      const float value = float(level) * (norm / float(s));
      out.levels[i] = level;
      out.decoded[i] = g[i] < 0 ? -value : value;
    }
  }
  return out;
}

template <class Options>
Options options_from(const std::string& name, std::map<std::string, Value> fields) {
  const ComponentInfo info{"compressor", name, "", Options::fields()};
  return Options::fields().read(info.resolve(ComponentSpec{"compressor", name, std::move(fields)}));
}

double squared_norm(std::span<const float> v, std::size_t begin, std::size_t end) {
  double sum = 0.0;
  for (std::size_t i = begin; i < end; ++i) sum += double(v[i]) * double(v[i]);
  return sum;
}

}  // namespace

TEST_CASE("qsgd decodes exactly what the reference draws, every step", "[compress][qsgd]") {
  struct Case {
    std::size_t n;
    unsigned levels;
    std::size_t bucket;
  };
  // Sizes across the codec's 2048-element windows, with buckets that straddle them, and every
  // packing width class: 2 bits (s = 1), 6, 9 (255) and the bytewise 17 (65535).
  for (Case c : {Case{1, 16, 512}, Case{1000, 16, 512}, Case{1000, 1, 7}, Case{4097, 255, 512}, Case{300, 65535, 64},
                 Case{50, 3, 1}, Case{2000, 4, 2000}, Case{9001, 16, 700}, Case{6150, 65535, 2049}, Case{4103, 7, 3}}) {
    for (QsgdCoding coding : {QsgdCoding::Fixed, QsgdCoding::Elias}) {
      QsgdCodec codec(c.levels, c.bucket, coding);
      codec.set_seed(42, 3);
      UniformStream rng(derive_seed(42, 1000 + 3));
      for (unsigned step = 0; step < 3; ++step) {
        auto g = random_gradient(c.n, static_cast<unsigned>(c.n + c.levels + step));
        if (c.n > 10) std::fill(g.begin(), g.begin() + 10, 0.0f);  // an all-zero bucket
        Payload payload;
        codec.compress(g, payload);
        const auto expected = reference_qsgd(g, c.levels, c.bucket, rng);
        REQUIRE(decode(codec, payload, c.n) == expected.decoded);
        if (coding == QsgdCoding::Fixed)
          REQUIRE(payload.size() == qsgd_payload_bytes(c.n, c.bucket, c.levels));
        else
          REQUIRE(payload.size() == qsgd_elias_payload_bytes(expected.levels, c.bucket));
      }
    }
  }
}

TEST_CASE("qsgd's uniform stream is eight scalar xoshiro256+ generators, two uniforms a draw",
          "[compress][qsgd][random]") {
  // The plain generator, one lane at a time, seeded with consecutive mix64 outputs.
  std::uint64_t seed = 77, lanes[8][4];
  for (int w = 0; w < 4; ++w)
    for (auto& lane : lanes) lane[w] = seed = mix64(seed);
  auto next = [](std::uint64_t* st) {
    const std::uint64_t result = st[0] + st[3], t = st[1] << 17;
    st[2] ^= st[0];
    st[3] ^= st[1];
    st[1] ^= st[2];
    st[0] ^= st[3];
    st[2] ^= t;
    st[3] = (st[3] << 45) | (st[3] >> 19);
    return result;
  };
  UniformStream stream(77);
  std::vector<float> got(16 * 300);
  stream.fill(got.data(), 32);  // two calls continue one sequence
  stream.fill(got.data() + 32, got.size() - 32);
  double sum = 0.0;
  for (std::size_t b = 0; b < got.size(); b += 16) {
    for (std::size_t l = 0; l < 8; ++l) {
      const std::uint64_t r = next(lanes[l]);
      REQUIRE(got[b + l] == std::ldexp(double(r >> 40), -24));
      REQUIRE(got[b + 8 + l] == std::ldexp(double((r >> 16) & 0xFFFFFF), -24));
    }
  }
  for (float u : got) {
    REQUIRE((u >= 0.0f && u < 1.0f));
    sum += u;
  }
  // Mean of 4800 uniforms: standard error 0.29 / sqrt(4800) = 0.0042; allow 5 of them.
  CHECK(std::fabs(sum / double(got.size()) - 0.5) < 0.021);
}

TEST_CASE("the bucket norm's partial sums agree with a sequential double sum", "[compress][qsgd]") {
  // Both sum exact squares in double; only the rounding of the additions differs (~1e-16
  // relative), so the float norms agree but where the double lands within that of a float
  // rounding boundary. Over these 2000 buckets: never, and never by more than one ulp.
  std::size_t differ = 0;
  for (unsigned k = 0; k < 2000; ++k) {
    auto g = random_gradient(1 + k % 700, k);
    if (k % 3 == 0)
      for (auto& v : g) v *= 1e30f;  // squares beyond float range stay finite in double
    double squares = 0.0;
    for (float v : g) squares += double(v) * double(v);
    const auto sequential = static_cast<float>(std::sqrt(squares));
    const float norm = qsgd_bucket_norm(g);
    REQUIRE(std::isfinite(norm));
    REQUIRE(std::fabs(norm - sequential) <= std::nextafter(sequential, INFINITY) - sequential);
    differ += norm != sequential;
  }
  CHECK(differ == 0);
  CHECK(qsgd_bucket_norm(std::vector<float>{3.0f, -4.0f}) == 5.0f);
  CHECK(qsgd_bucket_norm(std::vector<float>{}) == 0.0f);
  CHECK(std::isnan(qsgd_bucket_norm(std::vector<float>{1.0f, std::nanf("")})));
  CHECK(qsgd_bucket_norm(std::vector<float>{1.0f, -INFINITY}) == INFINITY);
}

TEST_CASE("qsgd is unbiased: the mean of 4000 draws is the input", "[compress][qsgd]") {
  const std::vector<float> g = {0.5f, -1.25f, 0.0f, 3.0f, -0.01f, 0.7f, 2.2f, -2.9f};
  const unsigned s = 4;
  QsgdCodec codec(s, 8, QsgdCoding::Fixed);
  codec.set_seed(7, 0);
  const int draws = 4000;
  std::vector<double> mean(g.size(), 0.0);
  for (int d = 0; d < draws; ++d) {
    Payload payload;
    codec.compress(g, payload);
    const auto q = decode(codec, payload, g.size());
    for (std::size_t i = 0; i < g.size(); ++i) mean[i] += q[i] / draws;
  }
  // Each draw is within one level step u = norm/s of the input, so its standard deviation is at
  // most u/2 and that of the mean u/(2 sqrt(draws)); allow 5 of those (about 0.04 u).
  const double unit = std::sqrt(squared_norm(g, 0, g.size())) / s;
  const double tolerance = 5.0 * unit / (2.0 * std::sqrt(double(draws)));
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(std::fabs(mean[i] - g[i]) <= tolerance);
}

TEST_CASE("qsgd's squared error stays below the paper's bound per bucket", "[compress][qsgd]") {
  // E||Q(v)-v||^2 <= min(n/s^2, sqrt(n)/s) ||v||^2 per bucket of n (Alistarh et al., Lemma 3.1).
  // The flat vector with s = 1 comes close to it (sqrt(n) - 1 against sqrt(n)), so a bug that
  // adds variance shows. The exact expectation, sum of u^2 p(1-p) with p the rounding
  // probability, is checked within 5% (over 2000 draws the relative standard error is < 1%).
  struct Case {
    std::vector<float> v;
    unsigned s;
    std::size_t bucket;
  };
  std::vector<Case> cases;
  cases.push_back({std::vector<float>(400, 0.3f), 1, 400});
  cases.push_back({random_gradient(1024, 11), 1, 512});
  cases.push_back({random_gradient(1024, 12), 16, 512});
  cases.push_back({random_gradient(1000, 13), 2, 100});
  cases.push_back({random_gradient(64, 14), 8, 64});
  for (const auto& c : cases) {
    const std::size_t n = c.v.size();
    QsgdCodec codec(c.s, c.bucket, QsgdCoding::Fixed);
    codec.set_seed(99, 1);
    const int draws = 2000;
    double bound = 0.0, expected = 0.0, error = 0.0;
    for (std::size_t begin = 0; begin < n; begin += c.bucket) {
      const std::size_t end = std::min(n, begin + c.bucket);
      const double m = double(end - begin), s = c.s, sq = squared_norm(c.v, begin, end);
      bound += std::min(m / (s * s), std::sqrt(m) / s) * sq;
      const double unit = std::sqrt(sq) / s;
      for (std::size_t i = begin; i < end; ++i) {
        const double r = std::fabs(c.v[i]) / unit, p = r - std::floor(r);
        expected += unit * unit * p * (1 - p);
      }
    }
    for (int d = 0; d < draws; ++d) {
      Payload payload;
      codec.compress(c.v, payload);
      const auto q = decode(codec, payload, n);
      for (std::size_t i = 0; i < n; ++i) error += (double(q[i]) - c.v[i]) * (q[i] - c.v[i]);
    }
    error /= draws;
    INFO("n=" << n << " s=" << c.s << " bucket=" << c.bucket << " expected=" << expected);
    CHECK(error <= bound);
    CHECK(error == Approx(expected).epsilon(0.05));
  }
}

TEST_CASE("a fixed-coded qsgd payload is 4 + 4 per bucket + packed (1 + level bits) per element", "[compress][qsgd]") {
  CHECK(qsgd_fixed_bits(1) == 2);
  CHECK(qsgd_fixed_bits(3) == 3);
  CHECK(qsgd_fixed_bits(4) == 4);
  CHECK(qsgd_fixed_bits(16) == 6);
  CHECK(qsgd_fixed_bits(65535) == 17);
  for (std::size_t n : {0u, 1u, 511u, 512u, 513u, 61706u}) {
    for (unsigned levels : {1u, 16u, 127u, 65535u}) {
      QsgdCodec codec(levels, 512, QsgdCoding::Fixed);
      Payload payload;
      codec.compress(random_gradient(n, 2), payload);
      const unsigned bits = 1 + static_cast<unsigned>(std::ceil(std::log2(levels + 1.0)));
      CHECK(payload.size() == 4 + 4 * ((n + 511) / 512) + (n * bits + 7) / 8);
      CHECK(payload.size() == qsgd_payload_bytes(n, 512, levels));
    }
  }
}

TEST_CASE(
    "elias-coded qsgd is smaller than fixed when levels are mostly small, and decodes the "
    "same",
    "[compress][qsgd]") {
  // Standard-normal entries in buckets of 512 with s = 16 land mostly on levels 0 and 1
  // (1 and 4 Elias bits against 6 fixed bits).
  const std::size_t n = 61706;
  QsgdCodec fixed(16, 512, QsgdCoding::Fixed), elias(16, 512, QsgdCoding::Elias);
  fixed.set_seed(5, 2);
  elias.set_seed(5, 2);
  for (unsigned step = 0; step < 3; ++step) {
    const auto g = random_gradient(n, 20 + step);
    Payload a, b;
    fixed.compress(g, a);
    elias.compress(g, b);
    CHECK(b.size() < a.size() * 3 / 4);
    CHECK(decode(elias, b, n) == decode(fixed, a, n));  // same draws, different wire
  }
}

TEST_CASE("qsgd refuses payloads of the wrong length or size, naming both", "[compress][qsgd]") {
  for (QsgdCoding coding : {QsgdCoding::Fixed, QsgdCoding::Elias}) {
    QsgdCodec codec(16, 64, coding);
    Payload payload;
    codec.compress(random_gradient(1000, 4), payload);
    std::vector<float> wrong(999, 0.0f), right(1000, 0.0f);
    CHECK_THROWS_WITH(codec.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 999 elements, got one for 1000"));
    Payload longer = payload;
    longer.push_back(0);
    CHECK_THROWS_WITH(codec.decompress_add(longer, right),
                      Catch::Contains(std::to_string(payload.size()) + " qsgd payload bytes") &&
                          Catch::Contains("got " + std::to_string(longer.size())));
    Payload shorter = payload;
    shorter.resize(payload.size() / 2);
    CHECK_THROWS_AS(codec.decompress_add(shorter, right), InvariantError);
    Payload tiny(2, 0);
    CHECK_THROWS_AS(codec.decompress_add(tiny, right), InvariantError);
  }
  // A level above s cannot come from the encoder: 4 levels use 3 level bits, 7 fits in them.
  QsgdCodec codec(4, 8, QsgdCoding::Fixed);
  Payload payload;
  codec.compress(std::vector<float>(8, 1.0f), payload);
  payload.back() = 0xFF;
  std::vector<float> dense(8, 0.0f);
  CHECK_THROWS_WITH(codec.decompress_add(payload, dense), Catch::Contains("exceeds levels=4"));
}

TEST_CASE("qsgd sends zeros for a zero gradient and carries a NaN on in its bucket", "[compress][qsgd]") {
  QsgdCodec codec(16, 4, QsgdCoding::Elias);
  Payload payload;
  codec.compress(std::vector<float>(10, 0.0f), payload);
  CHECK(decode(codec, payload, 10) == std::vector<float>(10, 0.0f));
  CHECK(payload.size() == 4 + 3 * 4 + 2);  // 10 one-bit codes of level 0

  std::vector<float> g(10, 1.0f);
  g[5] = std::nanf("");
  codec.compress(g, payload);
  const auto d = decode(codec, payload, 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(std::isnan(d[i]) == (i >= 4 && i < 8));
}

TEST_CASE("qsgd with error feedback sends plus keeps what was fed in", "[compress][qsgd]") {
  const std::size_t n = 3000;
  QsgdCompressor qsgd(QsgdOptions{2, 512, QsgdCoding::Fixed, true});
  qsgd.set_seed(1, 0);
  CHECK_FALSE(qsgd.summable());
  std::vector<float> previous(n, 0.0f);
  for (unsigned step = 0; step < 5; ++step) {
    const auto g = random_gradient(n, 50 + step);
    Payload payload;
    qsgd.compress(g, payload);
    const auto sent = decode(qsgd, payload, n);
    const auto residual = qsgd.residual();
    REQUIRE(residual.size() == n);
    // Equal up to float rounding of the three sums involved, a few ulps of the largest term.
    for (std::size_t i = 0; i < n; ++i) {
      const double scale = std::fabs(sent[i]) + std::fabs(residual[i]) + std::fabs(g[i]);
      REQUIRE(sent[i] + residual[i] == Approx(g[i] + previous[i]).margin(4e-7 * scale));
    }
    previous.assign(residual.begin(), residual.end());
  }
}

TEST_CASE("qsgd options name the field, the value and the valid range", "[compress][qsgd]") {
  const auto defaults = options_from<QsgdOptions>("qsgd", {});
  CHECK(defaults.levels == 16);
  CHECK(defaults.bucket_size == 512);
  CHECK(defaults.coding == QsgdCoding::Fixed);
  CHECK_FALSE(defaults.error_feedback);
  CHECK(options_from<QsgdOptions>("qsgd", {{"coding", std::string("elias")}}).coding == QsgdCoding::Elias);
  CHECK_THROWS_WITH(options_from<QsgdOptions>("qsgd", {{"levels", std::int64_t{0}}}),
                    "qsgd.levels must be in [1, 65535], got 0");
  CHECK_THROWS_WITH(options_from<QsgdOptions>("qsgd", {{"levels", std::int64_t{65536}}}),
                    "qsgd.levels must be in [1, 65535], got 65536");
  CHECK_THROWS_WITH(options_from<QsgdOptions>("qsgd", {{"bucket_size", std::int64_t{0}}}),
                    "qsgd.bucket_size must be >= 1, got 0");
  CHECK_THROWS_WITH(options_from<QsgdOptions>("qsgd", {{"coding", std::string("huffman")}}),
                    "qsgd.coding must be one of \"fixed\", \"elias\", got \"huffman\"");
  CHECK_THROWS_AS(options_from<QsgdOptions>("qsgd", {{"levels", 4.5}}), ConfigError);
}

TEST_CASE("qsgd's AVX2 and AVX-512 loops give the baseline's payloads and sums", "[compress][qsgd]") {
  for (Isa isa : isas_on_this_cpu())
    for (QsgdCoding coding : {QsgdCoding::Fixed, QsgdCoding::Elias}) {
      // Every width AVX-512 packs (2 to 8 bits: levels 1 to 127), and wider ones.
      for (unsigned levels : {1u, 2u, 4u, 9u, 16u, 127u, 255u, 65535u}) {
        QsgdCodec baseline(levels, 300, coding, Isa::Baseline), fast(levels, 300, coding, isa);
        baseline.set_seed(3, 1);
        fast.set_seed(3, 1);
        for (unsigned step = 0; step < 3; ++step) {
          auto g = random_gradient(5003, 70 + step);
          g[7] = 0.0f;
          g[8] = -0.0f;
          g[1000] = 1e-30f;                                   // subnormal after scaling in some buckets
          std::fill(g.begin() + 600, g.begin() + 900, 0.0f);  // an all-zero bucket
          g[4000] = INFINITY;                                 // a degenerate bucket
          Payload a, b;
          baseline.compress(g, a);
          fast.compress(g, b);
          INFO(isa_name(isa) << " levels=" << levels << " step=" << step);
          REQUIRE(a == b);
          const auto da = decode(baseline, a, g.size()), db = decode(fast, a, g.size());
          REQUIRE(std::memcmp(da.data(), db.data(), da.size() * sizeof(float)) == 0);
        }
      }
    }
}
