// Rng::advance against stepping the generator one draw at a time.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "engine/compress/random.hpp"
#include "engine/core/error.hpp"

using laconic::compress::Rng;

namespace {

std::vector<std::uint64_t> words(const Rng& rng) { return {rng.state_words().begin(), rng.state_words().end()}; }

}  // namespace

TEST_CASE("advancing the generator k draws leaves it where k calls of next() do", "[compress][random]") {
  for (std::uint64_t k : {0u, 1u, 2u, 3u, 63u, 64u, 65u, 255u, 256u, 1000u, 65537u, (1u << 20) + 12345u}) {
    Rng stepped(42), advanced(42);
    for (std::uint64_t i = 0; i < k; ++i) stepped.next();
    advanced.advance(k);
    INFO("k = " << k);
    REQUIRE(words(advanced) == words(stepped));
    CHECK(advanced.next() == stepped.next());
  }
}

TEST_CASE("advances add up, far beyond what stepping can check, and stop at 2^40", "[compress][random]") {
  const std::uint64_t a = (std::uint64_t{1} << 38) + 7, b = (std::uint64_t{1} << 36) + 12345;
  Rng once(7), twice(7), other_way(7);
  once.advance(a + b);
  twice.advance(a);
  twice.advance(b);
  other_way.advance(b);
  other_way.advance(a);
  CHECK(words(once) == words(twice));
  CHECK(words(once) == words(other_way));
  Rng start(7);
  CHECK(words(once) != words(start));
  CHECK_THROWS_AS(start.advance(std::uint64_t{1} << 40), laconic::InvariantError);
}
