#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <queue>
#include <random>

#include "engine/compress/huffman.hpp"
#include "engine/core/error.hpp"

using namespace laconic;
using namespace laconic::compress;

namespace {

// n symbols over [0, m): uniform, or geometric (p = 0.3, folded into the alphabet), or a
// Zipf-like 1/(s+1) law.
enum class Law { Uniform, Geometric, Zipf };

std::vector<std::uint16_t> random_symbols(std::size_t n, std::size_t m, Law law, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> out(n);
  std::uniform_int_distribution<std::size_t> uniform(0, m - 1);
  std::geometric_distribution<std::size_t> geometric(0.3);
  std::vector<double> weights(m);
  for (std::size_t s = 0; s < m; ++s) weights[s] = 1.0 / static_cast<double>(s + 1);
  std::discrete_distribution<std::size_t> zipf(weights.begin(), weights.end());
  for (auto& s : out) {
    switch (law) {
      case Law::Uniform:
        s = static_cast<std::uint16_t>(uniform(rng));
        break;
      case Law::Geometric:
        s = static_cast<std::uint16_t>(geometric(rng) % m);
        break;
      case Law::Zipf:
        s = static_cast<std::uint16_t>(zipf(rng));
        break;
    }
  }
  return out;
}

// The obviously-correct reference: the cost of an optimal prefix code is the sum of the
// weights of all merges of Huffman's algorithm (with a priority queue).
std::uint64_t reference_optimal_bits(const std::vector<std::uint64_t>& counts) {
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> queue;
  for (auto c : counts)
    if (c > 0) queue.push(c);
  std::uint64_t cost = 0;
  while (queue.size() > 1) {
    const auto a = queue.top();
    queue.pop();
    const auto b = queue.top();
    queue.pop();
    cost += a + b;
    queue.push(a + b);
  }
  return cost;
}

double entropy_bits(const std::vector<std::uint64_t>& counts) {
  double total = 0;
  for (auto c : counts) total += static_cast<double>(c);
  double h = 0;
  for (auto c : counts)
    if (c > 0) h -= static_cast<double>(c) / total * std::log2(static_cast<double>(c) / total);
  return h;
}

// Kraft's sum of the used lengths, exactly 1 for a complete prefix code.
double kraft_sum(const HuffmanCode& code) {
  double sum = 0;
  for (auto length : code.lengths())
    if (length > 0) sum += std::ldexp(1.0, -static_cast<int>(length));
  return sum;
}

}  // namespace

TEST_CASE("huffman round-trips random and skewed symbol streams exactly", "[compress][huffman]") {
  for (std::size_t m : {2u, 3u, 17u, 256u, 1000u, 65536u}) {
    for (Law law : {Law::Uniform, Law::Geometric, Law::Zipf}) {
      for (std::size_t n : {1u, 2u, 100u, 20000u}) {
        const auto symbols = random_symbols(n, m, law, static_cast<unsigned>(m + n));
        const auto bytes = huffman_encode(symbols, m);
        REQUIRE(huffman_decode(bytes, n) == symbols);
      }
    }
  }
}

TEST_CASE("huffman costs exactly what an optimal prefix code costs", "[compress][huffman]") {
  for (std::size_t m : {2u, 5u, 64u, 1000u}) {
    for (Law law : {Law::Uniform, Law::Geometric, Law::Zipf}) {
      const auto counts = huffman_counts(random_symbols(50000, m, law, 7), m);
      HuffmanCode code;
      code.build(counts);
      CHECK(code.coded_bits(counts) == reference_optimal_bits(counts));
      CHECK(kraft_sum(code) == 1.0);
    }
  }
}

TEST_CASE("the average huffman code length lies within [H, H+1) of the empirical entropy", "[compress][huffman]") {
  for (std::size_t m : {2u, 7u, 256u, 4096u}) {
    for (Law law : {Law::Uniform, Law::Geometric, Law::Zipf}) {
      const auto symbols = random_symbols(30000, m, law, 11);
      const auto counts = huffman_counts(symbols, m);
      HuffmanCode code;
      code.build(counts);
      const double average = static_cast<double>(code.coded_bits(counts)) / 30000.0;
      const double h = entropy_bits(counts);
      // 1e-9: rounding of the double entropy sum.
      CHECK(average >= h - 1e-9);
      CHECK(average < h + 1.0);
      // And the message carries exactly the codebook and those bits, padded to a byte.
      CHECK(huffman_encode(symbols, m).size() == code.codebook_bytes() + (code.coded_bits(counts) + 7) / 8);
    }
  }
}

TEST_CASE("a stream of one repeated symbol costs no code bits", "[compress][huffman]") {
  for (std::size_t m : {1u, 16u, 65536u}) {
    const std::vector<std::uint16_t> symbols(1000, static_cast<std::uint16_t>(m - 1));
    const auto bytes = huffman_encode(symbols, m);
    CHECK(bytes.size() == 5);  // uint16 m-1, kind, uint16 symbol
    CHECK(huffman_decode(bytes, 1000) == symbols);
    HuffmanCode code;
    code.build(huffman_counts(symbols, m));
    CHECK(code.used_symbols() == 1);
    CHECK(code.coded_bits(huffman_counts(symbols, m)) == 0);
  }
}

TEST_CASE("an empty stream round-trips and cannot decode symbols", "[compress][huffman]") {
  const auto bytes = huffman_encode({}, 10);
  CHECK(bytes.size() == 3);
  CHECK(huffman_decode(bytes, 0).empty());
  REQUIRE_THROWS_AS(huffman_decode(bytes, 5), InvariantError);
}

TEST_CASE("equal frequencies give a fixed-length, canonical code", "[compress][huffman]") {
  HuffmanCode code;
  code.build(std::vector<std::uint64_t>(256, 3));
  for (auto length : code.lengths()) CHECK(length == 8);
  // Five equal symbols: lengths 2,2,2,3,3 with the shorter codes on the lower symbols.
  code.build(std::vector<std::uint64_t>(5, 10));
  CHECK(std::vector<std::uint8_t>(code.lengths().begin(), code.lengths().end()) ==
        std::vector<std::uint8_t>{2, 2, 2, 3, 3});
  std::vector<std::uint16_t> symbols{0, 1, 2, 3, 4, 4, 3, 2, 1, 0};
  CHECK(huffman_decode(huffman_encode(symbols, 5), symbols.size()) == symbols);
  // Canonical: 00, 01, 10, 110, 111, each code's first bit first, stream bit i in bit i%8 of
  // byte i/8. Symbols 0,1,2,3 are the stream 0 0 0 1 1 0 1 1 0: byte 0 holds bits 3, 4, 6, 7.
  std::vector<std::uint8_t> out;
  code.write_codes(std::vector<std::uint16_t>{0, 1, 2, 3}, out);
  CHECK(out == std::vector<std::uint8_t>{0b11011000, 0});
}

TEST_CASE("the serialized huffman codebook round-trips", "[compress][huffman]") {
  std::vector<std::vector<std::uint64_t>> cases;
  cases.push_back(std::vector<std::uint64_t>(300, 0));  // empty
  cases.push_back(std::vector<std::uint64_t>(300, 0));
  cases.back()[123] = 9;  // one symbol
  cases.push_back(huffman_counts(random_symbols(5000, 1024, Law::Zipf, 3), 1024));
  cases.push_back(huffman_counts(random_symbols(40, 65536, Law::Uniform, 4), 65536));  // sparse
  cases.push_back(std::vector<std::uint64_t>(65536, 1));
  std::vector<std::uint64_t> gaps(1000, 0);  // runs of 0..8 unused symbols
  for (std::size_t s = 0, gap = 1; s < gaps.size(); s += gap, gap = gap % 9 + 1) gaps[s] = s + 1;
  cases.push_back(gaps);
  for (const auto& counts : cases) {
    HuffmanCode code;
    code.build(counts);
    std::vector<std::uint8_t> bytes{0xAB};  // the codebook is appended after what is there
    code.write_codebook(bytes);
    REQUIRE(bytes.size() == 1 + code.codebook_bytes());
    bytes.push_back(0xCD);  // and read from the front of what follows
    HuffmanCode read;
    CHECK(read.read_codebook(std::span<const std::uint8_t>(bytes).subspan(1)) == code.codebook_bytes());
    CHECK(read.alphabet() == counts.size());
    CHECK(read.used_symbols() == code.used_symbols());
    CHECK(std::equal(read.lengths().begin(), read.lengths().end(), code.lengths().begin(), code.lengths().end()));
  }
  // Compactness: 40 used symbols of 65536 take at most 7 bits each plus 41 runs of 23 bits
  // (157 bytes); a smooth Zipf histogram over 1024 symbols well under 2 bits per symbol.
  HuffmanCode sparse;
  sparse.build(cases[3]);
  CHECK(sparse.codebook_bytes() <= 3 + (40 * 7 + 41 * 23 + 7) / 8);
  HuffmanCode smooth;
  smooth.build(huffman_counts(random_symbols(200000, 1024, Law::Zipf, 3), 1024));
  CHECK(smooth.used_symbols() == 1024);
  CHECK(smooth.codebook_bytes() < 1024 * 2 / 8);
}

TEST_CASE("huffman code lengths are limited to 24 bits and the code stays complete", "[compress][huffman]") {
  // Fibonacci counts make Huffman's tree a chain: without a limit the longest code is 39 bits.
  const std::size_t m = 40;
  std::vector<std::uint64_t> counts(m);
  counts[0] = counts[1] = 1;
  for (std::size_t s = 2; s < m; ++s) counts[s] = counts[s - 1] + counts[s - 2];
  HuffmanCode code;
  code.build(counts);
  unsigned longest = 0;
  for (auto length : code.lengths()) longest = std::max<unsigned>(longest, length);
  CHECK(longest == HuffmanCode::kMaxLength);
  CHECK(kraft_sum(code) == 1.0);
  // Limiting costs bits, but only a little here (0.01%: the limited symbols are rare).
  const auto bits = code.coded_bits(counts);
  const auto optimal = reference_optimal_bits(counts);
  CHECK(bits >= optimal);
  CHECK(static_cast<double>(bits) <= 1.0001 * static_cast<double>(optimal));
  // Every symbol, including the long codes decoded bit by bit, round-trips.
  std::vector<std::uint16_t> symbols;
  for (std::uint16_t s = 0; s < m; ++s)
    for (int r = 0; r < 3; ++r) symbols.push_back(static_cast<std::uint16_t>((s * 7 + r) % m));
  CHECK(huffman_decode(huffman_encode(symbols, m), symbols.size()) == symbols);
}

TEST_CASE("truncated huffman messages are errors, never out-of-bounds reads", "[compress][huffman]") {
  for (Law law : {Law::Uniform, Law::Zipf}) {
    const auto symbols = random_symbols(500, 300, law, 5);
    const auto bytes = huffman_encode(symbols, 300);
    // Every proper prefix: the codebook or a code ends early. (A cut always falls inside or
    // before the last code, and a prefix code cannot end before the cut, so decoding needs
    // more bits than remain.)
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + cut);
      REQUIRE_THROWS_AS(huffman_decode(prefix, symbols.size()), InvariantError);
    }
    auto longer = bytes;
    longer.push_back(0);
    REQUIRE_THROWS_WITH(huffman_decode(longer, symbols.size()),
                        Catch::Contains("bytes for 500 symbols, got " + std::to_string(longer.size())));
  }
}

TEST_CASE("corrupted huffman messages are errors or wrong symbols, never crashes", "[compress][huffman]") {
  const auto symbols = random_symbols(2000, 1024, Law::Geometric, 6);
  const auto bytes = huffman_encode(symbols, 1024);
  std::mt19937 rng(8);
  int errors = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto bad = bytes;
    // Flip one to three bits, most often in the codebook (its first ~100 bytes).
    const int flips = 1 + trial % 3;
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = trial % 2 ? rng() % std::min<std::size_t>(bad.size(), 100) : rng() % bad.size();
      bad[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    }
    try {
      const auto decoded = huffman_decode(bad, symbols.size());
      REQUIRE(decoded.size() == symbols.size());
      for (auto s : decoded) REQUIRE(s < 1024);
    } catch (const InvariantError&) {
      ++errors;
    }
  }
  CHECK(errors > 0);
  // Hand-made bad codebooks.
  std::vector<std::uint8_t> unknown_kind{1, 0, 7};
  REQUIRE_THROWS_WITH(huffman_decode(unknown_kind, 0), Catch::Contains("kind 7"));
  std::vector<std::uint8_t> symbol_outside{1, 0, 1, 5, 0};  // alphabet 2, symbol 5
  REQUIRE_THROWS_WITH(huffman_decode(symbol_outside, 1), Catch::Contains("symbol 5 outside"));
  // Alphabet 2 with lengths 1 and 2 (one up, one up: bits 1 0 0 1 0 0): Kraft sum 3/4.
  std::vector<std::uint8_t> incomplete{1, 0, 2, 0b001001};
  REQUIRE_THROWS_WITH(huffman_decode(incomplete, 1), Catch::Contains("complete prefix code"));
  // Alphabet 2 starting with one down from length 0 (bits 1 0 1).
  std::vector<std::uint8_t> below_zero{1, 0, 2, 0b101};
  REQUIRE_THROWS_WITH(huffman_decode(below_zero, 1), Catch::Contains("below length 0"));
  // Alphabet 2 with an explicit length of 25 (bits 1 1, then 25 LSB-first).
  std::vector<std::uint8_t> too_long{1, 0, 2, 0b11 | 25 << 2, 0};
  REQUIRE_THROWS_WITH(huffman_decode(too_long, 1), Catch::Contains("length 25 over"));
}

TEST_CASE("huffman refuses symbols without a code", "[compress][huffman]") {
  HuffmanCode code;
  code.build(std::vector<std::uint64_t>{5, 0, 5});
  std::vector<std::uint8_t> out;
  REQUIRE_THROWS_WITH(code.write_codes(std::vector<std::uint16_t>{0, 1}, out),
                      Catch::Contains("symbol 1 has no huffman code"));
  REQUIRE_THROWS_AS(huffman_encode(std::vector<std::uint16_t>{3}, 3), InvariantError);
  REQUIRE_THROWS_AS(code.build(std::vector<std::uint64_t>{}), InvariantError);
  REQUIRE_THROWS_AS(code.build(std::vector<std::uint64_t>(65537, 1)), InvariantError);
}

namespace {

// The plain reference writer: canonical codes assigned from the lengths (RFC 1951 3.2.2), each
// code's bits written one at a time, its most significant first, stream bit i in bit i % 8 of
// byte i / 8.
std::vector<std::uint8_t> reference_codes(const HuffmanCode& code, const std::vector<std::uint16_t>& symbols) {
  const auto lengths = code.lengths();
  std::vector<std::uint32_t> per_length(HuffmanCode::kMaxLength + 2, 0), next(HuffmanCode::kMaxLength + 2, 0);
  for (auto length : lengths)
    if (length > 0) ++per_length[length];
  std::uint32_t first = 0;
  for (unsigned length = 1; length <= HuffmanCode::kMaxLength; ++length) {
    first = (first + per_length[length - 1]) << 1;
    next[length] = first;
  }
  std::vector<std::uint32_t> codes(lengths.size(), 0);
  for (std::size_t s = 0; s < lengths.size(); ++s)
    if (lengths[s] > 0) codes[s] = next[lengths[s]]++;
  std::vector<std::uint8_t> out;
  std::size_t bit = 0;
  for (auto s : symbols)
    for (unsigned b = lengths[s]; b-- > 0; ++bit) {
      if (bit / 8 == out.size()) out.push_back(0);
      out[bit / 8] |= static_cast<std::uint8_t>(((codes[s] >> b) & 1u) << (bit % 8));
    }
  return out;
}

// Symbols whose two halves code very differently: `first` of symbol 0 (the most frequent, a
// 1-bit code), then `rest` uniform over 1000 symbols (about 11 bits each), or the other way round.
std::vector<std::uint16_t> lopsided(std::size_t short_codes, std::size_t long_codes, bool short_first) {
  auto symbols = random_symbols(long_codes, 1000, Law::Uniform, 11);
  symbols.insert(short_first ? symbols.begin() : symbols.end(), short_codes, std::uint16_t{0});
  return symbols;
}

}  // namespace

TEST_CASE("huffman codes are the plain writer's bits, and must take the bits they are said to", "[compress][huffman]") {
  for (std::size_t m : {3u, 300u, 65536u}) {
    for (Law law : {Law::Geometric, Law::Zipf}) {
      const auto symbols = random_symbols(30001, m, law, static_cast<unsigned>(m));
      const auto counts = huffman_counts(symbols, m);
      HuffmanCode code;
      code.build(counts);
      const auto expected = reference_codes(code, symbols);
      std::vector<std::uint8_t> checked, counted;
      code.write_codes(symbols, checked);
      code.write_codes(symbols, code.coded_bits(counts), counted);
      REQUIRE(checked == expected);
      REQUIRE(counted == expected);
      std::vector<std::uint8_t> out;
      REQUIRE_THROWS_WITH(code.write_codes(symbols, code.coded_bits(counts) + 8, out),
                          Catch::Contains("take fewer than"));
      out.clear();
      REQUIRE_THROWS_WITH(code.write_codes(symbols, code.coded_bits(counts) - 9, out),
                          Catch::Contains("take more than"));
    }
  }
}

TEST_CASE("huffman's second decoding stream gives exactly the first stream's symbols", "[compress][huffman]") {
  const auto decode = [](const std::vector<std::uint16_t>& symbols, std::size_t m) {
    const auto bytes = huffman_encode(symbols, m);
    HuffmanCode code;
    const std::size_t codebook = code.read_codebook(bytes);
    std::vector<std::uint16_t> out(symbols.size());
    const std::size_t codes = code.read_codes(std::span(bytes).subspan(codebook), out);
    REQUIRE(codebook + codes == bytes.size());
    REQUIRE(out == symbols);
    return code.second_stream_symbols();
  };
  // Codes of 1 to 24 bits (65,536 Zipf symbols: many longer than the 11-bit table). The streams
  // meet within their window and the second gives all it holds (7/16 of the symbols), except
  // where nearly every code has one length: 1,000 uniform symbols get 9 and 10 bits, and a
  // meeting may take longer than the window.
  for (std::size_t m : {17u, 1000u, 65536u})
    for (Law law : {Law::Uniform, Law::Geometric, Law::Zipf}) {
      INFO("alphabet " << m << ", law " << static_cast<int>(law));
      const std::size_t taken = decode(random_symbols(100000, m, law, 3), m);
      if (m != 1000 || law != Law::Uniform) CHECK(taken > 40000);
    }
  // Fixed 9-bit codes and a middle 8 bits past a code start: the second stream's codes all start
  // at 8 mod 9, the first's at 0. They never meet, and the first stream decodes everything.
  std::vector<std::uint16_t> nine(32769);
  for (std::size_t i = 0; i < nine.size(); ++i) nine[i] = static_cast<std::uint16_t>(i % 512);
  CHECK(decode(nine, 512) == 0);
  // Halves far from equal: more symbols in the first half of the bits than it may hold (none
  // taken from the second stream), or many more in the second (the second stream fills its
  // place, waits, and finishes alone).
  CHECK(decode(lopsided(70000, 10000, true), 1000) == 0);
  CHECK(decode(lopsided(70000, 10000, false), 1000) > 0);
}

TEST_CASE("a long huffman message cut short, or with bytes after it, is refused", "[compress][huffman]") {
  const auto symbols = random_symbols(60000, 1000, Law::Zipf, 9);
  const auto bytes = huffman_encode(symbols, 1000);
  const std::size_t n = bytes.size();
  for (std::size_t cut : {n / 4, n / 2 - 1, n / 2, n / 2 + 1, 3 * n / 4, n - 9, n - 1}) {
    const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    REQUIRE_THROWS_AS(huffman_decode(prefix, symbols.size()), InvariantError);
  }
  for (std::size_t extra : {1u, 100u}) {
    auto longer = bytes;
    longer.resize(n + extra, 0x5a);
    REQUIRE_THROWS_AS(huffman_decode(longer, symbols.size()), InvariantError);
  }
  // Flipped bits anywhere: an error or other symbols of the alphabet, never a crash.
  std::mt19937 rng(10);
  for (int trial = 0; trial < 200; ++trial) {
    auto bad = bytes;
    bad[rng() % n] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    try {
      for (auto s : huffman_decode(bad, symbols.size())) REQUIRE(s < 1000);
    } catch (const InvariantError&) {}
  }
}
