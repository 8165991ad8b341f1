#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/compress/dgc.hpp"
#include "engine/compress/random.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::decode;
using laconic::testing::random_gradient;

namespace {

// The obviously-correct reference: the five steps of DGC written out one after the other, with
// full sorts instead of selection, drawing the same sample from the same stream.
struct ReferenceDgc {
  DgcOptions options;
  std::vector<float> u, v;
  Rng rng;
  std::int64_t epoch = 0;
  std::size_t last_candidates = 0;  // how many passed the sampled threshold in the last step
  std::size_t last_k = 0;

  ReferenceDgc(DgcOptions o, std::size_t n, std::uint64_t run_seed, int rank)
      : options(o), u(n, 0.0f), v(n, 0.0f), rng(derive_seed(run_seed, 3000 + static_cast<std::uint64_t>(rank))) {}

  double ratio() const {
    if (epoch >= options.warmup) return options.ratio;
    double r = 1.0;
    for (std::int64_t e = 0; e <= epoch; ++e) r *= 0.25;
    return std::max(static_cast<double>(options.ratio), r);
  }

  // The dense vector sent this step.
  std::vector<float> step(const std::vector<float>& g) {
    const std::size_t n = g.size();
    float scale = 1.0f;
    if (options.clip_norm > 0) {
      // One running sum (the compressor keeps four): the doubles may differ in the last bits,
      // but the float32 scale agrees unless they straddle a float rounding boundary (~1e-8
      // odds per step; these fixed seeds do not).
      double sq = 0;
      for (float x : g) sq += static_cast<double>(x) * x;
      if (std::sqrt(sq) > options.clip_norm) scale = static_cast<float>(options.clip_norm / std::sqrt(sq));
    }
    const auto m = static_cast<float>(options.momentum);
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = m * u[i] + scale * g[i];
      v[i] = v[i] + u[i];
    }
    const auto count = [](double fraction, std::size_t of) {
      return std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(of))), 1, of);
    };
    const std::size_t s = count(options.sample_fraction, n);
    std::vector<float> sample;
    for (std::size_t j = 0; j < s; ++j) sample.push_back(std::fabs(v[rng.below(n)]));
    std::sort(sample.begin(), sample.end(), std::greater<>());
    const float threshold = sample[count(ratio(), s) - 1];
    std::vector<std::size_t> passed;
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(v[i]) > threshold) passed.push_back(i);
    last_candidates = passed.size();
    last_k = count(ratio(), n);
    if (passed.size() > last_k) {
      std::stable_sort(passed.begin(), passed.end(),
                       [&](std::size_t a, std::size_t b) { return std::fabs(v[a]) > std::fabs(v[b]); });
      passed.resize(last_k);
    }
    std::vector<float> sent(n, 0.0f);
    for (std::size_t i : passed) {
      sent[i] = v[i];
      u[i] = 0.0f;
      v[i] = 0.0f;
    }
    return sent;
  }
};

std::vector<float> to_vector(std::span<const float> s) { return {s.begin(), s.end()}; }

// Gradients with a few heavy entries on top of noise, so that accumulation matters.
std::vector<float> step_gradient(std::size_t n, unsigned seed) {
  auto g = random_gradient(n, seed);
  for (std::size_t i = seed % 7; i < n; i += 97) g[i] *= 5.0f;
  return g;
}

ComponentSpec dgc_spec(double ratio, double momentum, double clip_norm, double sample_fraction, std::int64_t warmup) {
  return {"compressor",
          "dgc",
          {{"ratio", ratio},
           {"momentum", momentum},
           {"clip_norm", clip_norm},
           {"sample_fraction", sample_fraction},
           {"warmup", warmup}}};
}

std::uint32_t header_count(const Payload& p) {
  std::uint32_t count;
  std::memcpy(&count, p.data() + 4, 4);
  return count;
}

}  // namespace

TEST_CASE("dgc matches a plain reference step after step: selection, u and v", "[compress][dgc]") {
  bool refined = false, short_of_k = false;
  for (std::size_t n : {1u, 10u, 1000u, 20000u}) {
    for (double momentum : {0.0, 0.9}) {
      for (double clip_norm : {0.0, 3.0}) {
        for (double sample_fraction : {0.01, 0.3, 1.0}) {
          for (std::int64_t warmup : {0, 4}) {
            DgcOptions o{0.01, momentum, clip_norm, sample_fraction, warmup};
            DgcCompressor dgc(o);
            dgc.set_seed(42, 3);
            ReferenceDgc reference(o, n, 42, 3);
            for (unsigned step = 0; step < 15; ++step) {
              if (step % 3 == 0) {
                dgc.advance({static_cast<std::int64_t>(step / 3), step, nullptr});
                reference.epoch = step / 3;
              }
              auto g = step_gradient(n, 1000 + step);
              Payload payload;
              dgc.compress(g, payload);
              const auto expected = reference.step(g);
              REQUIRE(decode(dgc, payload, n) == expected);
              REQUIRE(to_vector(dgc.velocity()) == reference.u);
              REQUIRE(to_vector(dgc.accumulated()) == reference.v);
              const std::size_t sent = header_count(payload);
              CHECK(sent <= reference.last_k);
              refined = refined || reference.last_candidates > reference.last_k;
              short_of_k = short_of_k || reference.last_candidates < reference.last_k;
            }
          }
        }
      }
    }
  }
  // Both branches of the refinement ran: more than k passed (cut to k), fewer than k passed.
  CHECK(refined);
  CHECK(short_of_k);
}

TEST_CASE("a dgc payload is a Top-k payload: TopkCodec decodes it, 8 + 8*count bytes", "[compress][dgc]") {
  const std::size_t n = 20000;
  DgcCompressor dgc(DgcOptions{0.01, 0.9, 0.0, 0.05, 0});
  dgc.set_seed(5, 0);
  TopkCodec topk(0.5);
  std::size_t total = 0;
  for (unsigned step = 0; step < 10; ++step) {
    Payload payload;
    dgc.compress(step_gradient(n, step), payload);
    REQUIRE(payload.size() >= 8);
    std::uint32_t header[2];
    std::memcpy(header, payload.data(), 8);
    CHECK(header[0] == n);
    const std::size_t count = header[1];
    CHECK(count <= topk_count(0.01, n));
    CHECK(payload.size() == topk_payload_bytes(count));
    CHECK(payload.size() == dgc_payload_bytes(count));
    CHECK(payload.size() == 8 + 8 * count);
    auto dense = decode(topk, payload, n);
    CHECK(dense == decode(dgc, payload, n));
    CHECK(static_cast<std::size_t>(std::count_if(dense.begin(), dense.end(), [](float x) { return x != 0.0f; })) ==
          count);
    std::vector<std::uint32_t> indices(count);
    std::memcpy(indices.data(), payload.data() + 8, 4 * count);
    CHECK(std::is_sorted(indices.begin(), indices.end()));
    CHECK(std::adjacent_find(indices.begin(), indices.end()) == indices.end());
    total += count;
  }
  CHECK(total > 0);
}

TEST_CASE("when more than k pass, dgc keeps the k largest, ties to the lowest indices", "[compress][dgc]") {
  // 50 entries of magnitude 3, 100 of magnitude 2 (mixed signs), the rest 0.25; k = 100. One
  // sampled element sets the threshold; with this seed it is a 0.25 (98.5% of the entries), so
  // all 150 large entries pass and the refinement must cut the tied 2s at the 50 lowest indices.
  const std::size_t n = 10000;
  std::vector<float> g(n, 0.25f);
  std::vector<float> expected(n, 0.0f);
  for (std::size_t j = 0; j < 150; ++j) {
    const std::size_t i = (j * 7919) % n;  // scattered, distinct
    g[i] = j < 50 ? 3.0f : (j % 2 ? -2.0f : 2.0f);
  }
  std::size_t twos_kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::fabs(g[i]) == 3.0f) expected[i] = g[i];
    if (std::fabs(g[i]) == 2.0f && twos_kept < 50) {
      expected[i] = g[i];
      ++twos_kept;
    }
  }
  DgcCompressor dgc(DgcOptions{0.01, 0.0, 0.0, 0.0001, 0});
  dgc.set_seed(2, 0);
  Payload payload;
  dgc.compress(g, payload);
  CHECK(header_count(payload) == 100);
  CHECK(decode(dgc, payload, n) == expected);
}

TEST_CASE("momentum factor masking zeroes u and v exactly at the sent positions", "[compress][dgc]") {
  const std::size_t n = 5000;
  DgcCompressor dgc(DgcOptions{0.02, 0.9, 0.0, 0.1, 0});
  dgc.set_seed(9, 1);
  std::vector<float> u_before(n, 0.0f), v_before(n, 0.0f);
  for (unsigned step = 0; step < 20; ++step) {
    auto g = step_gradient(n, 50 + step);
    Payload payload;
    dgc.compress(g, payload);
    auto sent = decode(dgc, payload, n);
    auto u = dgc.velocity();
    auto v = dgc.accumulated();
    std::size_t masked = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float u_step = 0.9f * u_before[i] + 1.0f * g[i];
      if (sent[i] != 0.0f) {
        REQUIRE(u[i] == 0.0f);
        REQUIRE(v[i] == 0.0f);
        ++masked;
      } else {
        REQUIRE(u[i] == u_step);
        REQUIRE(v[i] == v_before[i] + u_step);
      }
    }
    CHECK(masked == header_count(payload));
    u_before.assign(u.begin(), u.end());
    v_before.assign(v.begin(), v.end());
  }
}

TEST_CASE("what dgc sent plus what remains in v equals the accumulated u", "[compress][dgc]") {
  const std::size_t n = 3000;
  DgcCompressor dgc(DgcOptions{0.01, 0.8, 0.0, 0.05, 0});
  dgc.set_seed(11, 2);
  std::vector<float> u_prev(n, 0.0f), v_prev(n, 0.0f);
  std::vector<double> sum_sent(n, 0.0), sum_u(n, 0.0), sum_abs_u(n, 0.0);
  for (unsigned step = 0; step < 50; ++step) {
    auto g = step_gradient(n, 300 + step);
    Payload payload;
    dgc.compress(g, payload);
    auto sent = decode(dgc, payload, n);
    auto v = dgc.accumulated();
    for (std::size_t i = 0; i < n; ++i) {
      const float u_step = 0.8f * u_prev[i] + 1.0f * g[i];
      // One step is exact: v_prev + u is one float add, and what is sent is v itself.
      REQUIRE(sent[i] + v[i] == v_prev[i] + u_step);
      sum_sent[i] += sent[i];
      sum_u[i] += u_step;
      sum_abs_u[i] += std::fabs(u_step);
    }
    u_prev.assign(dgc.velocity().begin(), dgc.velocity().end());
    v_prev.assign(v.begin(), v.end());
  }
  // Over many steps v's float additions round: each add errs by at most 2^-24 of a result no
  // larger than sum |u|, so 50 steps stay within 50 * 6e-8 * sum |u| < 1e-5 * sum |u|.
  for (std::size_t i = 0; i < n; ++i) REQUIRE(std::fabs(sum_sent[i] + v_prev[i] - sum_u[i]) <= 1e-5 * sum_abs_u[i]);
}

TEST_CASE("dgc warms its ratio up as 0.25^(epoch+1) until it reaches ratio", "[compress][dgc]") {
  CHECK(dgc_epoch_ratio(0.001, 4, 0) == 0.25);
  CHECK(dgc_epoch_ratio(0.001, 4, 1) == 0.0625);
  CHECK(dgc_epoch_ratio(0.001, 4, 2) == 0.015625);
  CHECK(dgc_epoch_ratio(0.001, 4, 3) == 0.00390625);
  CHECK(dgc_epoch_ratio(0.001, 4, 4) == 0.001);
  CHECK(dgc_epoch_ratio(0.001, 4, 100) == 0.001);
  // Longer warm-up: 0.25^5 < 0.001, so the ratio floors at `ratio`.
  CHECK(dgc_epoch_ratio(0.001, 8, 4) == 0.001);
  CHECK(dgc_epoch_ratio(0.001, 8, 1000) == 0.001);
  CHECK(dgc_epoch_ratio(0.01, 2, 1) == 0.0625);
  CHECK(dgc_epoch_ratio(0.01, 2, 2) == 0.01);
  // warmup = 0 disables it; a ratio above the schedule is never lowered.
  CHECK(dgc_epoch_ratio(0.001, 0, 0) == 0.001);
  CHECK(dgc_epoch_ratio(0.5, 4, 0) == 0.5);

  DgcCompressor dgc(DgcOptions{});
  CHECK(dgc.current_ratio() == 0.25);  // epoch 0 before any advance()
  const double expected[] = {0.25, 0.0625, 0.015625, 0.00390625, 0.001, 0.001};
  for (std::int64_t e = 0; e < 6; ++e) {
    dgc.advance({e, 0, nullptr});
    CHECK(dgc.current_ratio() == expected[e]);
  }
  DgcCompressor no_warmup(DgcOptions{0.001, 0.9, 0.0, 0.01, 0});
  CHECK(no_warmup.current_ratio() == 0.001);
}

TEST_CASE("in each warm-up epoch dgc sends close to, and never more than, that epoch's k", "[compress][dgc]") {
  const std::size_t n = 1 << 20;
  const auto g = random_gradient(n, 77);
  for (std::int64_t e = 0; e < 6; ++e) {
    DgcCompressor dgc(DgcOptions{0.001, 0.9, 0.0, 0.1, 4});
    dgc.set_seed(1, 0);
    dgc.advance({e, 0, nullptr});
    Payload payload;
    dgc.compress(g, payload);
    const std::size_t k = topk_count(dgc_epoch_ratio(0.001, 4, e), n);
    const std::size_t count = header_count(payload);
    CHECK(count <= k);
    // The threshold is the ks-th largest of s = 0.1n samples, ks = ratio*s >= 105: the number
    // passing it has a relative spread of about 1/sqrt(ks) < 10%, so 0.5k is 5 spreads away.
    CHECK(count >= k / 2);
    CHECK(payload.size() == dgc_payload_bytes(count));
  }
}

TEST_CASE("dgc clipping bounds each worker's gradient norm by clip_norm", "[compress][dgc]") {
  const std::size_t n = 10000;
  const auto g = random_gradient(n, 31);  // norm about sqrt(n) = 100
  double norm = 0;
  for (float x : g) norm += static_cast<double>(x) * x;
  norm = std::sqrt(norm);
  REQUIRE(norm > 50.0);
  for (double clip : {1.0, 0.5 * norm, 2.0 * norm}) {
    // momentum 0 and the first step: what is sent plus v is the clipped gradient itself.
    DgcCompressor dgc(DgcOptions{0.01, 0.0, clip, 0.01, 0});
    Payload payload;
    dgc.compress(g, payload);
    auto sent = decode(dgc, payload, n);
    auto v = dgc.accumulated();
    const float scale = clip < norm ? static_cast<float>(clip / norm) : 1.0f;
    double clipped = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float x = sent[i] + v[i];
      REQUIRE(x == g[i] * scale);
      clipped += static_cast<double>(x) * x;
    }
    clipped = std::sqrt(clipped);
    // The scale is rounded to float32: the norm lands within a relative 1e-6 of its target.
    if (clip < norm) {
      CHECK(clipped <= clip * (1 + 1e-6));
      CHECK(clipped >= clip * (1 - 1e-6));
    } else {
      CHECK(clipped == Approx(norm).epsilon(1e-12));
    }
  }
}

TEST_CASE("dgc draws its sample from a private stream per rank", "[compress][dgc]") {
  const std::size_t n = 100000;
  const auto g = random_gradient(n, 8);
  auto payload_for = [&](std::uint64_t seed, int rank) {
    DgcCompressor dgc(DgcOptions{0.001, 0.9, 0.0, 0.01, 0});
    dgc.set_seed(seed, rank);
    Payload p;
    dgc.compress(g, p);
    return p;
  };
  CHECK(payload_for(3, 0) == payload_for(3, 0));
  // ks = 1 of 1000 samples: the threshold (the sample's maximum) differs between streams, and
  // so does the number of entries above it.
  CHECK(payload_for(3, 0) != payload_for(3, 1));
  CHECK(payload_for(3, 0) != payload_for(4, 0));
}

TEST_CASE("dgc sends a NaN on instead of hiding it in v", "[compress][dgc]") {
  auto g = random_gradient(1000, 9);
  g[123] = std::nanf("");
  DgcCompressor dgc(DgcOptions{0.01, 0.9, 0.0, 0.01, 0});
  Payload payload;
  dgc.compress(g, payload);
  CHECK(std::isnan(decode(dgc, payload, g.size())[123]));
  CHECK(dgc.accumulated()[123] == 0.0f);
}

TEST_CASE("a dgc payload for another length is refused with both sizes", "[compress][dgc]") {
  DgcCompressor dgc(DgcOptions{0.1, 0.9, 0.0, 0.5, 0});
  Payload payload;
  dgc.compress(random_gradient(100, 1), payload);
  std::vector<float> wrong(99, 0.0f);
  REQUIRE_THROWS_WITH(dgc.decompress_add(payload, wrong),
                      Catch::Contains("expected a payload for 99 elements, got one for 100"));
  REQUIRE_THROWS_WITH(dgc.compress(random_gradient(99, 1), payload),
                      Catch::Contains("expected a gradient of 100 elements, got 99"));
}

TEST_CASE("dgc options name the field and the valid range", "[compress][dgc]") {
  REQUIRE_THROWS_AS(DgcOptions::fields().read(dgc_spec(2.0, 0.9, 0.0, 0.01, 4)), ConfigError);
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(2.0, 0.9, 0.0, 0.01, 4)),
                      "dgc.ratio must be in (0, 1], got 2");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.0, 0.9, 0.0, 0.01, 4)),
                      "dgc.ratio must be in (0, 1], got 0");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, 1.0, 0.0, 0.01, 4)),
                      "dgc.momentum must be in [0, 1), got 1");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, -0.1, 0.0, 0.01, 4)),
                      "dgc.momentum must be in [0, 1), got -0.1");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, 0.9, -1.0, 0.01, 4)),
                      "dgc.clip_norm must be in [0, inf), got -1");
  REQUIRE_THROWS_AS(DgcOptions::fields().read(dgc_spec(0.01, 0.9, std::numeric_limits<double>::infinity(), 0.01, 4)),
                    ConfigError);
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, 0.9, 0.0, 0.0, 4)),
                      "dgc.sample_fraction must be in (0, 1], got 0");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, 0.9, 0.0, 1.5, 4)),
                      "dgc.sample_fraction must be in (0, 1], got 1.5");
  REQUIRE_THROWS_WITH(DgcOptions::fields().read(dgc_spec(0.01, 0.9, 0.0, 0.01, -1)), "dgc.warmup must be >= 0, got -1");
  REQUIRE_THROWS_AS(DgcOptions::fields().read(dgc_spec(std::nan(""), 0.9, 0.0, 0.01, 4)), ConfigError);
  auto ok = DgcOptions::fields().read(dgc_spec(1.0, 0.0, 2.5, 1.0, 0));
  CHECK(ok.ratio == 1.0);
  CHECK(ok.clip_norm == 2.5);
  CHECK(ok.warmup == 0);

  ComponentInfo info{"compressor", "dgc", "", DgcOptions::fields()};
  auto defaults = DgcOptions::fields().read(info.resolve({"compressor", "dgc", {}}));
  CHECK(defaults.ratio == 0.001);
  CHECK(defaults.momentum == 0.9);
  CHECK(defaults.clip_norm == 0.0);
  CHECK(defaults.sample_fraction == 0.01);
  CHECK(defaults.warmup == 4);
  std::vector<std::string> names;
  for (const auto& f : DgcOptions::fields().specs()) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"ratio", "momentum", "clip_norm", "sample_fraction", "warmup"});
}
