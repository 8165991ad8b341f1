// SparseLoCo's compression (engine/compress/sparseloco.hpp) against a plain reference in doubles
// written from the paper's algorithm: e = decay e + x; per chunk the top-k of |e|; the values
// quantized to 2^bits levels, each decoded as the mean of the values at it; e -= what was sent.
// Then its promises: error feedback keeps what was not sent, the payload's size, and the
// density and bytes the paper's settings give.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/compress/random.hpp"
#include "engine/compress/sparseloco.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

SparselocoOptions small_options() {
  SparselocoOptions o;
  o.chunk = 8;
  o.topk = 3;
  o.bits = 2;
  o.decay = 0.9;
  return o;
}

std::vector<float> uniform_values(Rng& rng, std::size_t n) {
  std::vector<float> out(n);
  for (float& v : out) v = 2.0f * rng.uniform() - 1.0f;
  return out;
}

// The reference's compression of one layer's error (in place) into the dense values it sends.
std::vector<double> reference_layer(std::vector<double>& e, std::size_t chunk, std::size_t k, std::size_t levels,
                                    double range) {
  std::vector<std::size_t> chosen;
  for (std::size_t first = 0; first < e.size(); first += chunk) {
    std::vector<std::size_t> order(std::min(chunk, e.size() - first));
    std::iota(order.begin(), order.end(), first);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::abs(e[a]) > std::abs(e[b]); });
    order.resize(std::min(k, order.size()));
    chosen.insert(chosen.end(), order.begin(), order.end());
  }
  double mean = 0;
  for (std::size_t at : chosen) mean += e[at];
  mean /= static_cast<double>(chosen.size());
  double squares = 0;
  for (std::size_t at : chosen) squares += (e[at] - mean) * (e[at] - mean);
  const double width = range * std::sqrt(squares / static_cast<double>(chosen.size() - 1)) / static_cast<double>(levels);
  std::vector<double> sums(levels, 0.0), counts(levels, 0.0);
  std::vector<std::size_t> level(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const double at = std::round((e[chosen[i]] - mean) / width + static_cast<double>(levels / 2));
    level[i] = static_cast<std::size_t>(std::clamp(at, 0.0, static_cast<double>(levels - 1)));
    sums[level[i]] += e[chosen[i]];
    counts[level[i]] += 1;
  }
  std::vector<double> sent(e.size(), 0.0);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    sent[chosen[i]] = sums[level[i]] / counts[level[i]];
    e[chosen[i]] -= sent[chosen[i]];
  }
  return sent;
}

}  // namespace

TEST_CASE("sparseloco compresses as the paper's algorithm: a plain reference in doubles over three steps",
          "[compress][sparseloco]") {
  const SparselocoOptions o = small_options();
  SparselocoCompressor c(o);
  // [4, 5]: chunks of 8, 8 and 4 (3, 3 and 3 sent); [6]: 6 (3 sent).
  c.set_layer_shapes({{4, 5}, {6}});
  const std::vector<std::size_t> sizes = {20, 6};
  std::vector<std::vector<double>> error = {std::vector<double>(20, 0.0), std::vector<double>(6, 0.0)};
  Rng rng(7);
  for (int step = 0; step < 3; ++step) {
    const std::vector<float> x = uniform_values(rng, 26);
    Payload payload;
    c.compress(x, payload);
    CHECK(payload.size() == c.payload_size());
    std::vector<float> got(26, 0.0f);
    c.decompress_add(payload, got);
    std::size_t offset = 0;
    for (std::size_t l = 0; l < 2; ++l) {
      for (std::size_t i = 0; i < sizes[l]; ++i) error[l][i] = o.decay * error[l][i] + x[offset + i];
      const std::vector<double> sent = reference_layer(error[l], 8, 3, 4, o.range);
      for (std::size_t i = 0; i < sizes[l]; ++i) {
        INFO("step " << step << ", layer " << l << ", element " << i);
        CHECK(got[offset + i] == Approx(sent[i]).margin(1e-6));
        CHECK(c.error()[offset + i] == Approx(error[l][i]).margin(1e-6));
      }
      offset += sizes[l];
    }
  }
}

TEST_CASE("sparseloco's error keeps what was not sent: with no decay, sent plus error is what came in",
          "[compress][sparseloco]") {
  SparselocoOptions o = small_options();
  o.decay = 1.0;
  SparselocoCompressor c(o);
  c.set_layer_shapes({{40}});
  Rng rng(3);
  std::vector<double> given(40, 0.0);
  std::vector<float> sent(40, 0.0f);
  for (int step = 0; step < 25; ++step) {
    const std::vector<float> x = uniform_values(rng, 40);
    for (std::size_t i = 0; i < 40; ++i) given[i] += x[i];
    Payload payload;
    c.compress(x, payload);
    c.decompress_add(payload, sent);
  }
  for (std::size_t i = 0; i < 40; ++i) CHECK(sent[i] + c.error()[i] == Approx(given[i]).margin(1e-4));
  // And the error stays bounded: each element is sent once it is among its chunk's largest.
  for (float e : c.error()) CHECK(std::abs(e) < 10.0f);
}

TEST_CASE("sparseloco at its defaults: 64 of every 4096 elements (1.56%), 14 bits each: over 97x less than fp32",
          "[compress][sparseloco]") {
  SparselocoCompressor c({});
  c.set_layer_shapes({{128, 128}, {100}});
  // [128, 128]: 4 chunks, 256 sent: 16 bytes of levels, 256 x 12 bits of positions (384 bytes),
  // 256 x 2 bits of levels (64 bytes); [100]: one chunk of 100, 64 sent: 16 + 96 + 16.
  CHECK(c.payload_size() == (16 + 384 + 64) + (16 + 96 + 16));
  const double ratio = 128.0 * 128.0 * 4.0 / (16 + 384 + 64);
  CHECK(ratio > 97.0);
  Rng rng(1);
  const std::vector<float> x = uniform_values(rng, 128 * 128 + 100);
  Payload payload;
  c.compress(x, payload);
  std::vector<float> got(x.size(), 0.0f);
  c.decompress_add(payload, got);
  CHECK(std::count_if(got.begin(), got.end(), [](float v) { return v != 0.0f; }) <= 256 + 64);
}

TEST_CASE("sparseloco takes a NaN as the largest magnitude and still sends its payload's size",
          "[compress][sparseloco]") {
  SparselocoCompressor c(small_options());
  c.set_layer_shapes({{16}});
  std::vector<float> x(16, 0.5f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[9] = 2.0f;
  Payload payload;
  c.compress(x, payload);
  CHECK(payload.size() == c.payload_size());
  // Chunk [0, 8): the NaN first, then two of the 0.5s (the earliest); chunk [8, 16): 2.0 first.
  // The NaN makes the layer's mean NaN, so every value sent lands on level 0, decoded as NaN:
  // what a run that diverged sends, without undefined behaviour on the way.
  std::vector<float> got(16, 0.0f);
  c.decompress_add(payload, got);
  CHECK(std::isnan(got[3]));
  CHECK(std::isnan(got[9]));
  CHECK(got[15] == 0.0f);  // not among chunk [8, 16)'s three
}
