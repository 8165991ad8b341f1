#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/compress/bitpack.hpp"
#include "engine/core/error.hpp"
#include "tests/compress/compress_test_support.hpp"

using namespace laconic;
using namespace laconic::compress;
using laconic::testing::isas_on_this_cpu;

namespace {

std::vector<std::uint32_t> random_values(std::size_t count, unsigned bits, unsigned seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::vector<std::uint32_t> values(count);
  for (auto& v : values) v = static_cast<std::uint32_t>(rng() & mask);
  // The extremes of the width, where a masking bug would show.
  if (count > 0) values[0] = static_cast<std::uint32_t>(mask);
  if (count > 1) values[count - 1] = 0;
  return values;
}

}  // namespace

TEST_CASE("bitpack round-trips every width from 1 to 32 bits and odd counts exactly", "[compress][bitpack]") {
  for (unsigned bits = 1; bits <= 32; ++bits) {
    for (std::size_t count : {0u, 1u, 3u, 7u, 33u, 1001u}) {
      const auto values = random_values(count, bits, bits * 1000 + static_cast<unsigned>(count));
      std::vector<std::uint8_t> bytes;
      pack_bits(values, bits, bytes);
      REQUIRE(bytes.size() == packed_bytes(count, bits));
      std::vector<std::uint32_t> back(count, 0xdeadbeef);
      unpack_bits(bytes, bits, back);
      REQUIRE(back == values);
    }
  }
}

TEST_CASE("packed_bytes is ceil(count * bits / 8)", "[compress][bitpack]") {
  for (unsigned bits = 1; bits <= 32; ++bits)
    for (std::size_t count = 0; count < 50; ++count) CHECK(packed_bytes(count, bits) == (count * bits + 7) / 8);
  CHECK(packed_bytes(61706, 17) == 131126);  // 61706 * 17 = 1049002 bits
  CHECK_THROWS_AS(packed_bytes(10, 0), InvariantError);
  CHECK_THROWS_AS(packed_bytes(10, 33), InvariantError);
}

TEST_CASE("bit writing is LSB-first and continues across bytes", "[compress][bitpack]") {
  std::vector<std::uint8_t> bytes = {0xAA};  // a header byte the writer must keep
  BitWriter writer(bytes);
  writer.write(0b11, 2);
  writer.write(0b001, 3);
  writer.write(0b111, 3);  // first byte: 111 001 11
  writer.write(0x1FF, 9);  // 8 ones, then a 1 in the lowest bit of the third byte
  writer.write(0, 1);
  writer.write(1, 1);  // third byte: ...0 0 0 0 0 1 0 1
  CHECK(writer.bits_written() == 19);
  writer.finish();
  CHECK(bytes == std::vector<std::uint8_t>{0xAA, 0b11100111, 0xFF, 0b101});
}

TEST_CASE("mixed widths written with BitWriter read back with BitReader", "[compress][bitpack]") {
  std::mt19937 rng(5);
  std::vector<std::pair<std::uint32_t, unsigned>> written;
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  std::uint64_t total = 0;
  for (int i = 0; i < 5000; ++i) {
    const unsigned bits = rng() % 33;  // 0 writes nothing
    const std::uint32_t value = bits == 0 ? 0 : static_cast<std::uint32_t>(rng() & ((std::uint64_t{1} << bits) - 1));
    writer.write(value, bits);
    written.emplace_back(value, bits);
    total += bits;
  }
  writer.finish();
  REQUIRE(bytes.size() == (total + 7) / 8);
  BitReader reader(bytes);
  for (const auto& [value, bits] : written) REQUIRE(reader.read(bits) == value);
  CHECK(reader.bits_read() == total);
  CHECK(reader.bytes_read() == bytes.size());
}

TEST_CASE("reading past the end of the buffer is an error, the padding is not", "[compress][bitpack]") {
  const std::vector<std::uint32_t> values = {1, 2, 3};
  std::vector<std::uint8_t> bytes;
  pack_bits(values, 5, bytes);  // 15 bits in 2 bytes
  REQUIRE(bytes.size() == 2);
  BitReader reader(bytes);
  CHECK(reader.read(5) == 1);
  CHECK(reader.read(5) == 2);
  CHECK(reader.read(5) == 3);
  CHECK(reader.read(1) == 0);  // the zero padding of the last byte
  CHECK_THROWS_WITH(reader.read(1), Catch::Contains("reading 1 bits at bit 16 runs past the end of a 2-byte "
                                                    "buffer"));

  std::vector<std::uint32_t> four(4);
  CHECK_THROWS_WITH(unpack_bits(bytes, 5, four),
                    Catch::Contains("expected at least 3 bytes for 4 values of 5 bits, got 2"));
  BitReader empty(std::span<const std::uint8_t>{});
  CHECK(empty.read(0) == 0);
  CHECK_THROWS_AS(empty.read(1), InvariantError);
}

TEST_CASE("a value wider than its bit width is refused", "[compress][bitpack]") {
  std::vector<std::uint8_t> bytes;
  BitWriter writer(bytes);
  CHECK_THROWS_WITH(writer.write(8, 3), Catch::Contains("value 8 does not fit in 3 bits"));
  CHECK_THROWS_AS(writer.write(1, 33), InvariantError);
  const std::vector<std::uint32_t> values = {4};
  CHECK_THROWS_AS(pack_bits(values, 2, bytes), InvariantError);
}

TEST_CASE("bulk packing writes exactly the bytes BitWriter writes, and reads them back", "[compress][bitpack]") {
  for (Isa isa : isas_on_this_cpu())
    for (unsigned bits = 1; bits <= 32; ++bits) {
      // Counts below, at and past the whole-word groups and AVX-512's blocks of 64 values, with a
      // tail of every length.
      for (std::size_t count : {0u, 5u, 8u, 16u, 17u, 24u, 31u, 63u, 64u, 65u, 128u, 200u, 1003u}) {
        const auto values = random_values(count, bits, bits * 7 + static_cast<unsigned>(count));
        std::vector<std::uint8_t> expected;
        BitWriter writer(expected);
        for (std::uint32_t v : values) writer.write(v, bits);
        writer.finish();
        // Guard bytes on both sides: nothing outside [0, packed_bytes) is touched.
        std::vector<std::uint8_t> out(packed_bytes(count, bits) + 32, 0xCD);
        pack_bits_to(values.data(), count, bits, out.data() + 16, isa);
        INFO(isa_name(isa) << " bits=" << bits << " count=" << count);
        REQUIRE(std::vector<std::uint8_t>(out.begin() + 16, out.end() - 16) == expected);
        for (std::size_t i = 0; i < 16; ++i) REQUIRE((out[i] == 0xCD && out[out.size() - 1 - i] == 0xCD));
        std::vector<std::uint32_t> back(count + 1, 0xdeadbeef);
        unpack_bits_from(expected.data(), count, bits, back.data(), isa);
        REQUIRE(std::vector<std::uint32_t>(back.begin(), back.end() - 1) == values);
        REQUIRE(back.back() == 0xdeadbeef);
      }
    }
}

TEST_CASE("bulk packing drops the bits above the width, never spilling them into a neighbour", "[compress][bitpack]") {
  for (Isa isa : isas_on_this_cpu()) {
    // 0xFF at even places, 0 at odd: two bits 11 then 00, four times per byte.
    std::uint32_t wide[64];
    for (std::size_t i = 0; i < 64; ++i) wide[i] = i % 2 == 0 ? 0xFF : 0;
    std::uint8_t two[16];
    pack_bits_to(wide, 64, 2, two, isa);
    INFO(isa_name(isa));
    for (std::uint8_t byte : two) REQUIRE(byte == 0x33);
    // Every width, values with all their high bits set: each packs as its low bits alone.
    for (unsigned bits = 1; bits < 32; ++bits) {
      const auto low = random_values(130, bits, bits);
      std::vector<std::uint32_t> high(low);
      for (auto& v : high) v |= ~std::uint32_t{0} << bits;
      std::vector<std::uint8_t> a(packed_bytes(130, bits)), b(a.size());
      pack_bits_to(low.data(), 130, bits, a.data(), Isa::Baseline);
      pack_bits_to(high.data(), 130, bits, b.data(), isa);
      INFO("bits=" << bits);
      REQUIRE(a == b);
    }
  }
}
