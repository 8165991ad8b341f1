#include "engine/compress/randomk.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "engine/compress/sparse_pairs.hpp"
#include "engine/compress/topk.hpp"
#include "engine/core/error.hpp"

namespace laconic::compress {

namespace {

// Private streams are numbered from 2^32 up so that they never coincide with a step number
// (the shared streams derive_seed(run_seed, step)).

}  // namespace

OptionFields<RandomkOptions> RandomkOptions::fields() {
  using O = RandomkOptions;
  return OptionFields<O>()
      .field("ratio", &O::ratio, "fraction of elements sent per step")
      .flag("shared_seed", &O::shared_seed,
            "all workers draw the same indices, so payloads are values only and summed by allreduce")
      .flag("error_feedback", &O::error_feedback, "accumulate what was not sent and add it to the next gradient");
}

std::size_t randomk_payload_bytes(std::size_t k, bool shared_seed) {
  return shared_seed ? 4 * k : sparse_pairs_bytes(k);
}

void RandomkCodec::set_seed(std::uint64_t run_seed, int rank) {
  base_seed_ =
      shared_seed_ ? run_seed : derive_seed(run_seed, streams::kRandomkPrivate + static_cast<std::uint32_t>(rank));
}

void RandomkCodec::choose_indices(std::size_t n, std::size_t k) {
  // Reseeding per step (rather than one long stream) makes step t's choice a function of
  // (run_seed, t) alone, which is what lets every worker agree without talking.
  rng_.reseed(derive_seed(base_seed_, step_));
  chosen_.resize((n + 63) / 64);  // stays zero between calls; only grows when n does
  // Floyd (Bentley & Floyd 1987): for j = n-k .. n-1 pick t in [0, j]; take t, or j when t is
  // already taken. Every k-subset comes out equally likely, with exactly k draws.
  for (std::size_t j = n - k; j < n; ++j) {
    std::size_t t = static_cast<std::size_t>(rng_.below(j + 1));
    if ((chosen_[t / 64] >> (t % 64)) & 1u) t = j;
    chosen_[t / 64] |= std::uint64_t{1} << (t % 64);
  }
  // Reading the bitmap word by word yields the indices sorted, and clears it for the next call.
  indices_.resize(k);
  std::size_t taken = 0;
  for (std::size_t w = 0; w < chosen_.size(); ++w) {
    std::uint64_t bits = chosen_[w];
    if (bits == 0) continue;
    chosen_[w] = 0;
    while (bits != 0) {
      indices_[taken++] = static_cast<std::uint32_t>(w * 64 + std::countr_zero(bits));
      bits &= bits - 1;
    }
  }
  LACONIC_ENFORCE(taken == k, "chose ", taken, " indices, expected k=", k);
}

void RandomkCodec::compress(std::span<const float> gradient, Payload& payload) {
  const std::size_t n = gradient.size();
  LACONIC_ENFORCE(n <= std::numeric_limits<std::uint32_t>::max(), "randomk handles at most 2^32-1 elements, got ", n);
  const std::size_t k = topk_count(ratio_, n);
  choose_indices(n, k);
  ++step_;
  n_ = n;
  compressed_ = true;

  payload.resize(randomk_payload_bytes(k, shared_seed_));
  std::uint8_t* values = payload.data();
  if (!shared_seed_) {
    const std::uint32_t header[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k)};
    std::memcpy(payload.data(), header, sizeof header);
    if (k > 0) std::memcpy(payload.data() + 8, indices_.data(), 4 * k);
    values = payload.data() + 8 + 4 * k;
  }
  for (std::size_t i = 0; i < k; ++i) std::memcpy(values + 4 * i, &gradient[indices_[i]], 4);
}

void RandomkCodec::decompress_add(const Payload& payload, std::span<float> dense) const {
  if (shared_seed_) {
    LACONIC_ENFORCE(compressed_, "a shared-seed randomk payload decodes against the indices of ",
                    "this worker's compress() for the same step, and none has run yet");
    LACONIC_ENFORCE(dense.size() == n_, "expected a dense vector of ", n_, " elements (this step's gradient), got ",
                    dense.size());
    const std::size_t k = indices_.size();
    LACONIC_ENFORCE(payload.size() == randomk_payload_bytes(k, true), "expected ", randomk_payload_bytes(k, true),
                    " payload bytes for k=", k, ", got ", payload.size());
    for (std::size_t i = 0; i < k; ++i) {
      float value;
      std::memcpy(&value, payload.data() + 4 * i, 4);
      dense[indices_[i]] += value;
    }
    return;
  }
  add_sparse_pairs(payload, dense, "randomk");
}

}  // namespace laconic::compress
