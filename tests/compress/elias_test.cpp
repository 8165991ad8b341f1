#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/compress/elias.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

// floor(log2 x) the slow, obvious way.
unsigned slow_floor_log2(std::uint64_t x) {
  unsigned n = 0;
  while (x > 1) {
    x >>= 1;
    ++n;
  }
  return n;
}

// Small values, values either side of every power of two, and uniform 64-bit values.
std::vector<std::uint64_t> test_values() {
  std::vector<std::uint64_t> values;
  for (std::uint64_t x = 1; x <= 300; ++x) values.push_back(x);
  for (unsigned k = 1; k < 64; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  values.push_back(std::numeric_limits<std::uint64_t>::max());
  std::mt19937_64 rng(17);
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t x = rng() >> (rng() % 64);  // spread over all lengths
    values.push_back(x == 0 ? 1 : x);
  }
  return values;
}

}  // namespace

TEST_CASE("the Elias gamma code of x takes 2*floor(log2 x)+1 bits", "[compress][elias]") {
  for (std::uint64_t x : test_values()) {
    const unsigned expected = 2 * slow_floor_log2(x) + 1;
    REQUIRE(elias_gamma_bits(x) == expected);
    std::vector<std::uint8_t> bytes;
    BitWriter writer(bytes);
    write_elias_gamma(writer, x);
    REQUIRE(writer.bits_written() == expected);
  }
  CHECK(elias_gamma_bits(1) == 1);
  CHECK(elias_gamma_bits(std::numeric_limits<std::uint64_t>::max()) == 127);
  CHECK(elias_bits(0) == 1);
  CHECK(elias_bits(16) == 9);  // gamma(17): floor(log2 17) = 4
}

TEST_CASE("Elias gamma codes round-trip many values, large ones included", "[compress][elias]") {
  const auto values = test_values();
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  std::uint64_t bits = 0;
  for (std::uint64_t x : values) {
    write_elias_gamma(writer, x);
    bits += elias_gamma_bits(x);
  }
  writer.finish();
  REQUIRE(bytes.size() == (bits + 7) / 8);
  BitReader reader(bytes);
  for (std::uint64_t x : values) REQUIRE(read_elias_gamma(reader) == x);
  CHECK(reader.bits_read() == bits);
}

TEST_CASE("non-negative values travel as the gamma code of value+1, zero in one bit", "[compress][elias]") {
  std::vector<std::uint64_t> values = {0, 0, 1, 2, 3, 15, 16, 65535, 0, std::numeric_limits<std::uint64_t>::max() - 1};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) values.push_back(rng() % 40);
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  std::uint64_t bits = 0;
  for (std::uint64_t v : values) {
    write_elias(writer, v);
    bits += elias_bits(v);
    REQUIRE(elias_bits(v) == elias_gamma_bits(v + 1));
  }
  REQUIRE(writer.bits_written() == bits);
  writer.finish();
  BitReader reader(bytes);
  for (std::uint64_t v : values) REQUIRE(read_elias(reader) == v);
  CHECK_THROWS_AS(elias_bits(std::numeric_limits<std::uint64_t>::max()), InvariantError);
}

TEST_CASE("Elias gamma codes have the documented bit layout", "[compress][elias]") {
  // LSB-first: gamma(1) = 1; gamma(2) = 0 1 | 0; gamma(5) = 0 0 1 | low bits 01 (LSB first: 1 0).
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  write_elias_gamma(writer, 1);
  writer.finish();
  write_elias_gamma(writer, 2);
  writer.finish();
  write_elias_gamma(writer, 5);
  writer.finish();
  CHECK(bytes == std::vector<std::uint8_t>{0b1, 0b010, 0b01100});
}

TEST_CASE("Elias decoding refuses zero, truncated and overlong codes", "[compress][elias]") {
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  CHECK_THROWS_WITH(write_elias_gamma(writer, 0), Catch::Contains("Elias gamma codes values >= 1, got 0"));

  // gamma(2^20) needs 41 bits; cut it to 4 bytes.
  write_elias_gamma(writer, std::uint64_t{1} << 20);
  writer.finish();
  REQUIRE(bytes.size() == 6);
  bytes.resize(4);
  BitReader truncated(bytes);
  CHECK_THROWS_WITH(read_elias_gamma(truncated), Catch::Contains("runs past the end"));

  const std::vector<std::uint8_t> zeros(9, 0);  // 72 zero bits: no 64-bit value
  BitReader overlong(zeros);
  CHECK_THROWS_WITH(read_elias_gamma(overlong), Catch::Contains("more than 63 leading zeros"));
}
