#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "engine/train/data/shard.hpp"

using laconic::train::shard_indices;

TEST_CASE("shards are disjoint, cover n - n % workers examples, and repeat for a seed", "[train][shard]") {
  for (int workers : {1, 2, 3, 4, 7}) {
    const std::int64_t n = 1003;
    std::set<std::int64_t> seen;
    for (int r = 0; r < workers; ++r) {
      auto shard = shard_indices(n, workers, r, 42, 0);
      REQUIRE(static_cast<std::int64_t>(shard.size()) == n / workers);
      for (auto i : shard) {
        REQUIRE(i >= 0);
        REQUIRE(i < n);
        REQUIRE(seen.insert(i).second);  // never in two shards
      }
      CHECK(shard == shard_indices(n, workers, r, 42, 0));
    }
    CHECK(static_cast<std::int64_t>(seen.size()) == n - n % workers);
  }
}

TEST_CASE("shards are reshuffled per epoch and differ per seed", "[train][shard]") {
  auto e0 = shard_indices(1000, 2, 0, 1, 0);
  CHECK(e0 != shard_indices(1000, 2, 0, 1, 1));
  CHECK(e0 != shard_indices(1000, 2, 0, 2, 0));
}
