#pragma once
#include <cstdint>
#include <vector>

namespace laconic::train {

/// Indices of worker `rank`'s shard of `n` examples for `epoch`: one permutation of [0, n) per
/// (seed, epoch), shared by all workers, cut into `workers` contiguous blocks of n / workers
/// (the n % workers left-over examples sit out that epoch). Disjoint across ranks, identical
/// across runs with the same seed, reshuffled each epoch.
std::vector<std::int64_t> shard_indices(std::int64_t n, int workers, int rank, std::int64_t seed, std::int64_t epoch);

}  // namespace laconic::train
