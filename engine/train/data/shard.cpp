#include "engine/train/data/shard.hpp"

#include <numeric>
#include <random>

#include "engine/core/error.hpp"

namespace laconic::train {

std::vector<std::int64_t> shard_indices(std::int64_t n, int workers, int rank, std::int64_t seed, std::int64_t epoch) {
  LACONIC_ENFORCE(workers >= 1 && rank >= 0 && rank < workers, "rank ", rank, " of ", workers);
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), std::int64_t{0});
  // mt19937_64 and an explicit Fisher-Yates keep the permutation identical across platforms and
  // standard libraries (std::shuffle's algorithm is unspecified).
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 1000003u + static_cast<std::uint64_t>(epoch));
  for (std::int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i + 1));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
  }
  const std::int64_t per = n / workers;
  return {all.begin() + rank * per, all.begin() + (rank + 1) * per};
}

}  // namespace laconic::train
