// quantized_allreduce's codec (ChunkQuantizer): its bytes, its levels against a plain reference
// in doubles, stochastic rounding's promise (unbiased, error below one level) against nearest
// rounding's bias, the non-finite chunks, and the compressor's payload.
#include <catch2/catch.hpp>

#include <cmath>

#include "compress_test_support.hpp"
#include "engine/compress/builtin.hpp"
#include "engine/compress/quantized_allreduce.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

std::vector<float> round_trip(const ChunkQuantizer& q, std::span<const float> x) {
  std::vector<std::uint8_t> bytes(q.bytes(x.size()));
  q.encode(x, bytes);
  std::vector<float> out(x.size());
  q.decode(bytes, out);
  return out;
}

// The reference: chunk c's scale is max |x| / L in doubles (rounded to float as sent), element x
// goes to the nearest level x / scale.
std::vector<float> nearest_reference(std::span<const float> x, unsigned bits, std::size_t chunk) {
  const double top = (1 << (bits - 1)) - 1;
  std::vector<float> out(x.size());
  for (std::size_t begin = 0; begin < x.size(); begin += chunk) {
    const std::size_t end = std::min(x.size(), begin + chunk);
    double largest = 0;
    for (std::size_t i = begin; i < end; ++i) largest = std::max(largest, std::abs(static_cast<double>(x[i])));
    const float scale = static_cast<float>(static_cast<float>(largest) / top);
    for (std::size_t i = begin; i < end; ++i) {
      const double level = largest > 0 ? std::nearbyint(x[i] * (top / static_cast<float>(largest))) : 0.0;
      out[i] = static_cast<float>(std::clamp(level, -top, top) * scale);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the quantizer's bytes: a float32 scale per chunk and bits per element", "[compress][quantized]") {
  CHECK(chunk_quantized_bytes(0, 8, 1024) == 0);
  CHECK(chunk_quantized_bytes(1024, 8, 1024) == 4 + 1024);
  CHECK(chunk_quantized_bytes(1025, 8, 1024) == 8 + 1025);
  CHECK(chunk_quantized_bytes(1025, 4, 1024) == 8 + 513);
  CHECK(chunk_quantized_bytes(7, 4, 3) == 12 + 4);
  CHECK(largest_level(8) == 127);
  CHECK(largest_level(4) == 7);
}

TEST_CASE("nearest rounding gives the reference's levels, at 8 and 4 bits", "[compress][quantized]") {
  const auto x = testing::random_gradient(3001, 5);
  for (unsigned bits : {8u, 4u})
    for (std::size_t chunk : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, std::size_t{5000}}) {
      INFO("bits=" << bits << " chunk=" << chunk);
      const ChunkQuantizer q(bits, chunk, LevelRounding::Nearest);
      const auto got = round_trip(q, x);
      const auto want = nearest_reference(x, bits, chunk);
      for (std::size_t i = 0; i < x.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-7));
    }
}

TEST_CASE("values on the levels come back exactly; the largest of a chunk is its top level",
          "[compress][quantized]") {
  for (unsigned bits : {8u, 4u}) {
    const int top = static_cast<int>(largest_level(bits));
    std::vector<float> x;
    for (int level = -top; level <= top; ++level) x.push_back(0.25f * static_cast<float>(level));
    for (auto rounding : {LevelRounding::Nearest, LevelRounding::Stochastic}) {
      const auto got = round_trip(ChunkQuantizer(bits, x.size(), rounding), x);
      CHECK(got == x);
    }
  }
}

TEST_CASE("stochastic rounding is unbiased and stays within one level; nearest is biased by the fraction",
          "[compress][quantized]") {
  // A chunk whose largest element fixes the scale at 1/127, and elements 0.3 of a level above
  // a level: nearest always rounds them down (bias -0.3 of a level), stochastic up 30% of the time.
  const std::size_t n = 256;
  const float level = 1.0f / 127.0f;
  std::vector<float> x(n, 10.3f * level);
  x[0] = 1.0f;
  const ChunkQuantizer nearest(8, n, LevelRounding::Nearest), stochastic(8, n, LevelRounding::Stochastic);
  const auto down = round_trip(nearest, x);
  for (std::size_t i = 1; i < n; ++i) CHECK(down[i] == Approx(10 * level).epsilon(1e-6));
  const int trials = 400;
  double sum = 0, sq = 0;
  for (int t = 0; t < trials; ++t) {
    const auto got = round_trip(stochastic, x);
    for (std::size_t i = 1; i < n; ++i) {
      const double error = (got[i] - x[i]) / level;
      CHECK(std::abs(error) < 1.0 + 1e-4);
      sum += error;
      sq += error * error;
    }
  }
  const double count = trials * static_cast<double>(n - 1), mean = sum / count;
  const double sd = std::sqrt(sq / count - mean * mean);
  // Bernoulli(0.3) minus 0.3: mean 0, standard deviation sqrt(0.21) = 0.458 of a level.
  CHECK(std::abs(mean) <= 4 * sd / std::sqrt(count));
  CHECK(sd == Approx(std::sqrt(0.21)).epsilon(0.03));
}

TEST_CASE("a chunk of zeros decodes to zeros; one holding an inf or a NaN decodes to NaN, the others not",
          "[compress][quantized]") {
  std::vector<float> x(12, 0.0f);
  x[5] = 0.5f;
  x[8] = std::numeric_limits<float>::infinity();
  const auto got = round_trip(ChunkQuantizer(8, 4, LevelRounding::Stochastic), x);
  for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == 0.0f);
  CHECK(got[5] == 0.5f);
  for (std::size_t i = 8; i < 12; ++i) CHECK(std::isnan(got[i]));
  x[8] = std::nanf("");
  const auto with_nan = round_trip(ChunkQuantizer(8, 4, LevelRounding::Nearest), x);
  for (std::size_t i = 8; i < 12; ++i) CHECK(std::isnan(with_nan[i]));
  CHECK(with_nan[5] == 0.5f);
}

TEST_CASE("quantized_allreduce's payload: the count, then the quantizer's bytes; options checked",
          "[compress][quantized]") {
  auto c = builtin_compressors().create({"compressor", "quantized_allreduce", {{"bits", std::int64_t{4}}}});
  const auto x = testing::random_gradient(2050, 3);
  Payload payload;
  c->compress(x, payload);
  CHECK(payload.size() == 4 + chunk_quantized_bytes(2050, 4, 1024));
  const auto decoded = testing::decode(*c, payload, x.size());
  double largest = 0;
  for (float v : x) largest = std::max(largest, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::abs(decoded[i] - x[i]) <= largest / 7 * 1.0001);
  CHECK(c->capabilities().summed_in_transit == TransitFormat::Int4);
  CHECK(c->transit_codec() != nullptr);
  auto gathered = builtin_compressors().create({"compressor", "quantized_allreduce", {{"gather", true}}});
  CHECK(gathered->capabilities().summed_in_transit == TransitFormat::None);
  CHECK(gathered->transit_codec() == nullptr);
  CHECK_THROWS_WITH(builtin_compressors().create({"compressor", "quantized_allreduce", {{"bits", std::int64_t{6}}}}),
                    Catch::Contains("bits must be 4 or 8, got 6"));
  CHECK_THROWS_WITH(
      builtin_compressors().create({"compressor", "quantized_allreduce", {{"rounding", std::string("up")}}}),
      Catch::Contains("\"stochastic\""));
}
